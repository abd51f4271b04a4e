import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import { QUEUE_NAMES } from '../../../queues/names.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { QueueDashboard } from '../../ports/queue-dashboard.js';
import { sharedConnectionOptions } from '../redis/connection.js';
import { RedisKeys } from '../redis/keys.js';

export type BoardConfig = Pick<Config, 'redis_url' | 'redis_prefix' | 'redis_connect_timeout_ms' | 'redis_command_timeout_ms'>;

/**
 * The BullMQ dashboard (@bull-board/express) at `basePath`: BullMQ Queue objects of its own on one
 * Redis connection of its own, created on first use and closed with `close`.
 */
export function bullBoard(config: BoardConfig & { redis_url: string }, log: Logger, basePath: string): QueueDashboard {
  let app: Express | null = null;
  let connection: Redis | null = null;
  let queues: Queue[] = [];

  const board = (): Express => {
    if (app) return app;
    connection = new Redis(config.redis_url, {
      ...sharedConnectionOptions({ connectTimeoutMs: config.redis_connect_timeout_ms, commandTimeoutMs: config.redis_command_timeout_ms }),
      connectionName: 'neuralcleave-board',
    });
    connection.on('error', (err: Error) => log.debug({ err: err.message }, 'queue dashboard: Redis connection error'));
    const prefix = new RedisKeys(config.redis_prefix).bullPrefix;
    const shared = connection;
    queues = QUEUE_NAMES.map((name) => {
      const q = new Queue(name, { connection: shared, prefix });
      q.on('error', (err) => log.debug({ queue: name, err: err.message }, 'queue dashboard: queue error'));
      return q;
    });
    const adapter = new ExpressAdapter().setBasePath(basePath);
    createBullBoard({
      queues: queues.map((q) => new BullMQAdapter(q)),
      // @bull-board/express 9.10.1 pins its own copy of @bull-board/api 9.10.1, whose types differ from
      // 9.10.2's only in private members; the adapter contract is the same at run time
      serverAdapter: adapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
      options: { uiConfig: { boardTitle: 'NeuralCleave queues' } },
    });
    app = adapter.getRouter() as Express;
    return app;
  };

  return {
    handle(req, res, next) {
      board()(req as Parameters<Express>[0], res as Parameters<Express>[1], next);
    },
    async close() {
      const [open, conn] = [queues, connection];
      queues = [];
      connection = null;
      app = null;
      await Promise.allSettled(open.map((q) => q.close()));
      await conn?.quit().catch(() => conn.disconnect());
    },
  };
}
