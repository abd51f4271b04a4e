import { readFileSync, existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import Database from 'better-sqlite3';

/**
 * Every key of a Redis database with every value it holds, as text: strings, lists, hashes, sets,
 * sorted sets (members and scores) and streams (every field of every entry). What a grep for a
 * user's text must search after an erasure.
 */
export async function redisDump(url: string): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const out: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        out.push(key);
        const type = await redis.type(key);
        if (type === 'string') out.push((await redis.get(key)) ?? '');
        else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
        else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
        else if (type === 'set') out.push(...(await redis.smembers(key)));
        else if (type === 'zset') out.push(...(await redis.zrange(key, 0, -1, 'WITHSCORES')));
        else if (type === 'stream') for (const [id, fields] of await redis.xrange(key, '-', '+')) out.push(id, ...fields);
        else out.push(`(unread type ${type})`);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return out;
}

/** The bytes of the SQLite file and its WAL, as latin1 text (a byte-for-byte grep). */
export function fileBytes(dbPath: string): string {
  const parts = [dbPath, `${dbPath}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString('latin1'));
  return parts.join('\n');
}

/** Moves the WAL into the file, then (optionally) rebuilds the file so no freed page survives. */
export function checkpoint(dbPath: string, vacuum: boolean): void {
  const db = new Database(dbPath);
  try {
    db.pragma('busy_timeout = 10000');
    db.pragma('wal_checkpoint(TRUNCATE)');
    if (vacuum) {
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
  } finally {
    db.close();
  }
}
