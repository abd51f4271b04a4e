import type { Redis } from 'ioredis';
import { BullMqQueue } from '../bullmq/queue.js';
import { InProcessQueue } from '../in-process/queue.js';
import type { JobQueue } from '../../../queues/queue.js';
import type { BackendReport } from '../../backends.js';
import type { Config } from '../../config/schema.js';
import { ConfigError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { InProcessShortTermStore } from '../in-process/short-term.js';
import type { ShortTermStore } from '../../ports/short-term.js';
import { connectRedis, redactRedisUrl } from './connection.js';
import { RedisKeys } from './keys.js';
import { RedisShortTermStore } from './short-term.js';
import { RedisTombstones } from './tombstones.js';
import type { Tombstones } from '../../ports/tombstones.js';

/**
 * How long a tombstone is kept: far longer than an embed job waits in a queue that workers consume
 * (docs/architecture.md, embed workers without the durable store).
 */
export const TOMBSTONE_TTL_S = 30 * 86_400;

export type RedisConfig = Pick<
  Config,
  | 'redis_url'
  | 'redis_prefix'
  | 'redis_connect_timeout_ms'
  | 'redis_command_timeout_ms'
  | 'short_term_ttl_s'
  | 'short_term_max_turns'
  | 'worker_lock_duration_ms'
  | 'worker_stalled_interval_ms'
  | 'worker_shutdown_timeout_ms'
>;

export interface OpenedRedis {
  queue: JobQueue;
  shortTerm: ShortTermStore;
  /** marks of deleted texts for embed workers without the durable store; null in-process (every job runs beside the store) */
  tombstones: Tombstones | null;
  /** the process's one shared connection; null when the in-process defaults are used */
  connection: Redis | null;
  /** what doctor and /health show for the queue and the short-term tier, now */
  reports(): { queue: BackendReport; short_term: BackendReport };
  /** closes the shared connection: call after the queue and the short-term store are closed */
  close(): Promise<void>;
}

export interface OpenRedisOptions {
  /** a worker process: no Redis is a configuration error (exit 2), not a fallback */
  required?: boolean;
}

/**
 * The queue and the short-term tier, decided together once at start (docs/architecture.md, deployment and backends) since both live on
 * Redis: BullMQ and the Redis store when `redis_url` is set and answers within
 * `redis_connect_timeout_ms`; else the in-process queue and store. An unreachable Redis is a fallback
 * — one warning, and the reports say why; an unset `redis_url` is the one-process default, not a
 * fault. A Redis lost later is handled per call (commands fail fast; the turn log keeps every turn)
 * and shows as `down` until the connection is back.
 */
export async function openRedisBackends(config: RedisConfig, log: Logger, options: OpenRedisOptions = {}): Promise<OpenedRedis> {
  const inProcess = (report: (part: 'queue' | 'short_term') => BackendReport): OpenedRedis => {
    const queue = new InProcessQueue(log.child({ component: 'queue' }));
    const shortTerm = new InProcessShortTermStore({ ttlSeconds: config.short_term_ttl_s, maxTurns: config.short_term_max_turns });
    return {
      queue,
      shortTerm,
      tombstones: null,
      connection: null,
      reports: () => ({ queue: report('queue'), short_term: report('short_term') }),
      close: async () => {},
    };
  };
  const backendOf = (part: 'queue' | 'short_term') => (part === 'queue' ? 'in-process' : 'memory');

  if (!config.redis_url) {
    if (options.required) throw noRedis('redis_url is not set');
    return inProcess((part) => ({ backend: backendOf(part), state: 'ok', detail: 'redis_url not set; everything runs in this process' }));
  }
  const url = redactRedisUrl(config.redis_url);
  const probe = await connectRedis(
    config.redis_url,
    { connectTimeoutMs: config.redis_connect_timeout_ms, commandTimeoutMs: config.redis_command_timeout_ms },
    log.child({ component: 'redis' }),
  );
  let queue: BullMqQueue | null = null;
  let reason = probe.ok ? '' : probe.reason;
  if (probe.ok) {
    try {
      queue = await BullMqQueue.create({
        connection: probe.client,
        prefix: new RedisKeys(config.redis_prefix).bullPrefix,
        log: log.child({ component: 'queue' }),
        lockDurationMs: config.worker_lock_duration_ms,
        stalledIntervalMs: config.worker_stalled_interval_ms,
        shutdownTimeoutMs: config.worker_shutdown_timeout_ms,
      });
    } catch (err) {
      reason = (err as Error).message;
      probe.client.disconnect();
    }
  }
  if (!probe.ok || !queue) {
    if (options.required) throw noRedis(`Redis at ${url} is not reachable (${reason})`);
    log.warn({ redis_url: url, err: reason }, 'Redis is not reachable; the queue and the short-term tier run in this process');
    const detail = `Redis at ${url} not reachable at start: ${reason}`;
    return inProcess((part) => ({ backend: backendOf(part), state: 'fallback', detail }));
  }

  const client = probe.client;
  const keys = new RedisKeys(config.redis_prefix);
  const shortTerm = new RedisShortTermStore(client, keys, { ttlSeconds: config.short_term_ttl_s, maxTurns: config.short_term_max_turns });
  const report = (backend: string): BackendReport =>
    client.status === 'ready'
      ? { backend, state: 'ok', detail: `${url} (prefix ${config.redis_prefix})` }
      : { backend, state: 'down', detail: `${url}: connection ${client.status}; turns wait in the turn log` };
  return {
    queue,
    shortTerm,
    tombstones: new RedisTombstones(client, keys, TOMBSTONE_TTL_S),
    connection: client,
    reports: () => ({ queue: report('bullmq'), short_term: report('redis') }),
    close: async () => {
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

function noRedis(why: string): ConfigError {
  return new ConfigError(
    `a worker consumes the shared BullMQ queues and needs Redis, but ${why}; set redis_url (NEURALCLEAVE_REDIS_URL), ` +
      'or run `neuralcleave serve` alone, which runs the workers in-process',
    [{ path: 'redis_url', message: why }],
  );
}
