import type { Redis } from 'ioredis';
import type { Tombstones } from '../../ports/tombstones.js';
import type { RedisKeys } from './keys.js';

/** the field of a tombstone that buries every text of the memory */
const ANY = '*';
/** marks per pipeline */
const CHUNK = 500;

/** Tombstones in the shared Redis: one hash per memory, its fields the buried texts, with a TTL. */
export class RedisTombstones implements Tombstones {
  constructor(
    private readonly client: Redis,
    private readonly keys: RedisKeys,
    readonly ttlSeconds: number,
  ) {}

  async bury(userId: string, memories: ReadonlyArray<{ id: string; hash: string | null }>): Promise<void> {
    for (let i = 0; i < memories.length; i += CHUNK) {
      const tx = this.client.multi();
      for (const m of memories.slice(i, i + CHUNK)) {
        const key = this.keys.tombstone(userId, m.id);
        tx.hset(key, m.hash ?? ANY, '1');
        tx.expire(key, this.ttlSeconds);
      }
      await tx.exec();
    }
  }

  async supersede(userId: string, id: string, oldHash: string, newHash: string): Promise<void> {
    const key = this.keys.tombstone(userId, id);
    await this.client.multi().hset(key, oldHash, '1').hdel(key, newHash).expire(key, this.ttlSeconds).exec();
  }

  async isBuried(userId: string, id: string, hash: string): Promise<boolean> {
    const [any, text] = await this.client.hmget(this.keys.tombstone(userId, id), ANY, hash);
    return any !== null || text !== null;
  }
}
