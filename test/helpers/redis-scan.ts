import { Redis } from 'ioredis';

/** Every key of the Redis server whose value, read whole by its type, holds `marker`. */
export async function keysHolding(url: string, marker: string): Promise<string[]> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        const value =
          type === 'string' ? await redis.get(key)
          : type === 'hash' ? await redis.hgetall(key)
          : type === 'list' ? await redis.lrange(key, 0, -1)
          : type === 'set' ? await redis.smembers(key)
          : type === 'zset' ? await redis.zrange(key, 0, -1)
          : type === 'stream' ? await redis.xrange(key, '-', '+')
          : null;
        if (JSON.stringify(value ?? '').includes(marker)) found.push(`${key} (${type})`);
      }
    } while (cursor !== '0');
    return found;
  } finally {
    redis.disconnect();
  }
}
