import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { BullMqQueue } from '../../src/adapters/bullmq/queue.js';
import { connectRedis } from '../../src/adapters/redis/connection.js';
import { startRedis } from '../helpers/redis.js';
import { runJobQueueContract } from './job-queue.contract.js';

const log = pino({ level: 'silent' });
const redis = await startRedis();
const connections: Redis[] = [];
after(async () => {
  for (const c of connections) c.disconnect();
  await redis.stop();
});

// each queue on its own key prefix: the tests share the server, never each other's jobs
runJobQueueContract('BullMQ on redis-server', async (o) => {
  const probe = await connectRedis(redis.url, { connectTimeoutMs: 2000, commandTimeoutMs: 5000 }, log);
  if (!probe.ok) throw new Error(probe.reason);
  connections.push(probe.client);
  return BullMqQueue.create({ connection: probe.client, prefix: `contract-${randomUUID()}`, log, ...o });
});
