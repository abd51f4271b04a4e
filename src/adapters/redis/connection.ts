import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../../logger.js';

export interface RedisConnectOptions {
  /** how long start-up waits for Redis before falling back to the embedded defaults */
  connectTimeoutMs: number;
  /** a command not answered within this fails (instead of hanging a request) */
  commandTimeoutMs: number;
}

/**
 * Options of the one shared connection of a process (producers and the short-term tier). A request
 * must never wait on a Redis that went away: with no offline queue a command fails at once while the
 * connection is down, the command timeout bounds a half-open socket, and one retry at most per
 * command. The connection itself keeps reconnecting in the background, so Redis coming back is
 * picked up without a restart.
 */
export function sharedConnectionOptions(o: RedisConnectOptions): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: o.connectTimeoutMs,
    commandTimeout: o.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(100 * times, 2000),
    connectionName: 'neuralcleave',
  };
}

/**
 * Options of the connection BullMQ Workers duplicate: a worker is a background process, so while
 * Redis is away its commands wait for the reconnect rather than fail (BullMQ requires
 * `maxRetriesPerRequest: null` for its blocking connections), and no command timeout cuts its
 * blocking job fetch short.
 */
export function workerConnectionOptions(): Partial<RedisOptions> {
  return {
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    commandTimeout: undefined,
    connectionName: 'neuralcleave-worker',
  };
}

export type RedisProbe = { ok: true; client: Redis } | { ok: false; reason: string };

/**
 * Connects the shared connection, giving up after `connectTimeoutMs`. On failure the client is
 * disconnected (no background retries) and the reason is returned for the fallback warning. Once
 * connected, losing and regaining Redis is logged once per outage, not once per retry.
 */
export async function connectRedis(url: string, options: RedisConnectOptions, log: Logger): Promise<RedisProbe> {
  const client = new Redis(url, sharedConnectionOptions(options));
  let lastError = '';
  let connected = false;
  let down = false;
  client.on('error', (err: Error) => {
    lastError = err.message;
    if (connected && !down) {
      down = true;
      log.warn({ err: err.message }, 'lost the Redis connection; turns are still accepted into the turn log and re-enqueued when it returns');
    }
  });
  client.on('ready', () => {
    if (down) log.info('Redis connection restored');
    down = false;
  });

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs + 250);
      }),
    ]);
    connected = true;
    return { ok: true, client };
  } catch (err) {
    client.disconnect();
    return { ok: false, reason: lastError || (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** Redacts a password from a Redis URL before it is logged or shown. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unparseable url)';
  }
}
