import type { Redis } from 'ioredis';
import { TurnSchema, type Turn } from '../../domain/turn.js';
import type { ShortTermOptions, ShortTermStore, VersionedTurns } from '../../ports/short-term.js';
import { encodeKeyPart, type RedisKeys } from './keys.js';

/**
 * A list element is `<encoded turn id> <turn JSON>`: the scripts below find a turn by id with one
 * pattern match instead of decoding JSON inside Redis. An encoded id holds no space.
 */
function element(t: Turn): string {
  return `${encodeKeyPart(t.id)} ${JSON.stringify(t)}`;
}

function parseElement(el: string): Turn {
  return TurnSchema.parse(JSON.parse(el.slice(el.indexOf(' ') + 1)));
}

/** RPUSH arguments per call inside a script stay well under Lua's unpack limit. */
const UNPACK_CHUNK = 1000;

const SCRIPTS = {
  /**
   * KEYS: session list, user index. ARGV: max turns, ttl ms, now ms, session id, elements…
   * Appends the elements whose id the session does not hold yet, trims to the newest `max`, refreshes
   * the TTL and records the session in the user's index (scored by expiry). Returns how many were added.
   */
  ncShortTermPush: `
    local list, index = KEYS[1], KEYS[2]
    local max, ttl, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
    local seen = {}
    for _, el in ipairs(redis.call('LRANGE', list, 0, -1)) do seen[string.match(el, '^([^ ]*) ')] = true end
    local batch, added = {}, 0
    for i = 5, #ARGV do
      local id = string.match(ARGV[i], '^([^ ]*) ')
      if not seen[id] then
        seen[id] = true
        batch[#batch + 1] = ARGV[i]
        added = added + 1
        if #batch == ${UNPACK_CHUNK} then redis.call('RPUSH', list, unpack(batch)); batch = {} end
      end
    end
    if #batch > 0 then redis.call('RPUSH', list, unpack(batch)) end
    -- the list exists now: it held every id found in \`seen\`, or it was just pushed to
    redis.call('LTRIM', list, -max, -1)
    redis.call('PEXPIRE', list, ttl)
    redis.call('ZADD', index, now + ttl, ARGV[4])
    redis.call('ZREMRANGEBYSCORE', index, '-inf', now)
    redis.call('PEXPIRE', index, ttl)
    return added`,
  /** KEYS: session list, user index. ARGV: ttl ms, now ms, session id, elements… (already trimmed) */
  ncShortTermReplace: `
    local list, index = KEYS[1], KEYS[2]
    local ttl, now = tonumber(ARGV[1]), tonumber(ARGV[2])
    redis.call('DEL', list)
    if #ARGV < 4 then
      redis.call('ZREM', index, ARGV[3])
      return 0
    end
    local batch = {}
    for i = 4, #ARGV do
      batch[#batch + 1] = ARGV[i]
      if #batch == ${UNPACK_CHUNK} then redis.call('RPUSH', list, unpack(batch)); batch = {} end
    end
    if #batch > 0 then redis.call('RPUSH', list, unpack(batch)) end
    redis.call('PEXPIRE', list, ttl)
    redis.call('ZADD', index, now + ttl, ARGV[3])
    redis.call('PEXPIRE', index, ttl)
    return #ARGV - 3`,
  /** KEYS: session list, user index. ARGV: session id, encoded ids… Returns how many turns were removed. */
  ncShortTermRemove: `
    local list, index = KEYS[1], KEYS[2]
    local drop = {}
    for i = 2, #ARGV do drop[ARGV[i]] = true end
    local removed = 0
    for _, el in ipairs(redis.call('LRANGE', list, 0, -1)) do
      if drop[string.match(el, '^([^ ]*) ')] then removed = removed + redis.call('LREM', list, 1, el) end
    end
    if removed > 0 and redis.call('EXISTS', list) == 0 then redis.call('ZREM', index, ARGV[1]) end
    return removed`,
} as const;

type ScriptName = keyof typeof SCRIPTS;
type ScriptCall = (keys: [string, string], ...args: Array<string | number>) => Promise<number>;

export interface RedisShortTermOptions extends ShortTermOptions {
  /** close the connection on `close()` (a store given the process's shared connection does not) */
  ownsConnection?: boolean;
  clock?: () => number;
}

/**
 * Short-term tier on Redis: one list per session (JSON turns, oldest first) with a TTL refreshed on
 * every write and trimmed to the newest `maxTurns`, plus a per-user sorted set of live sessions so
 * a user's sessions are found without scanning the keyspace. Each write is one atomic script call;
 * the calls of one push are pipelined.
 */
export class RedisShortTermStore implements ShortTermStore {
  readonly backend = 'redis' as const;
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly options: RedisShortTermOptions,
  ) {
    this.now = options.clock ?? Date.now;
    this.ttlMs = options.ttlSeconds * 1000;
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      // defining a command twice on a shared connection is harmless; the script is sent once (EVALSHA)
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 2, lua });
    }
  }

  private script(name: ScriptName, target: Redis | ReturnType<Redis['pipeline']> = this.redis): ScriptCall {
    const fn = (target as unknown as Record<string, (...a: unknown[]) => Promise<number>>)[name]!;
    return (keys, ...args) => fn.call(target, ...keys, ...args);
  }

  async push(turns: readonly Turn[]): Promise<void> {
    if (turns.length === 0) return;
    const bySession = new Map<string, Turn[]>();
    for (const t of turns) {
      const k = this.keys.session(t.user_id, t.session_id);
      const list = bySession.get(k);
      if (list) list.push(t);
      else bySession.set(k, [t]);
    }
    const now = this.now();
    const pipeline = this.redis.pipeline();
    const push = this.script('ncShortTermPush', pipeline);
    for (const [key, list] of bySession) {
      const first = list[0]!;
      void push([key, this.keys.userSessions(first.user_id)], this.options.maxTurns, this.ttlMs, now, first.session_id, ...list.map(element));
    }
    throwFirstError(await pipeline.exec());
  }

  /** no versions kept: the turns, every time (a process with Redis reads Redis, not another process's copy) */
  async recentSince(userId: string, sessionId: string, limit: number | undefined): Promise<VersionedTurns> {
    return { version: null, turns: await this.recent(userId, sessionId, limit) };
  }

  async recent(userId: string, sessionId: string, limit = this.options.maxTurns): Promise<Turn[]> {
    if (limit <= 0) return [];
    const els = await this.redis.lrange(this.keys.session(userId, sessionId), -limit, -1);
    return els.map(parseElement);
  }

  async replace(userId: string, sessionId: string, turns: readonly Turn[]): Promise<void> {
    const kept = turns.slice(-this.options.maxTurns);
    await this.script('ncShortTermReplace')(
      [this.keys.session(userId, sessionId), this.keys.userSessions(userId)],
      this.ttlMs,
      this.now(),
      sessionId,
      ...kept.map(element),
    );
  }

  async remove(userId: string, sessionId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.script('ncShortTermRemove')(
      [this.keys.session(userId, sessionId), this.keys.userSessions(userId)],
      sessionId,
      ...ids.map(encodeKeyPart),
    );
  }

  async clear(userId: string, sessionId?: string): Promise<number> {
    const index = this.keys.userSessions(userId);
    if (sessionId !== undefined) {
      const results = await this.redis.multi().del(this.keys.session(userId, sessionId)).zrem(index, sessionId).exec();
      throwFirstError(results);
      return Number(results?.[0]?.[1] ?? 0);
    }
    const sessions = await this.redis.zrange(index, 0, -1);
    const multi = this.redis.multi();
    for (const s of sessions) multi.del(this.keys.session(userId, s));
    multi.del(index);
    const results = await multi.exec();
    throwFirstError(results);
    return (results ?? []).slice(0, sessions.length).reduce((n, [, v]) => n + Number(v), 0);
  }

  async clearAll(): Promise<number> {
    const lists = await this.unlinkMatching(this.keys.allSessionsPattern());
    await this.unlinkMatching(this.keys.allUserIndexesPattern());
    return lists;
  }

  private async unlinkMatching(pattern: string): Promise<number> {
    let removed = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += await this.redis.unlink(...keys);
    } while (cursor !== '0');
    return removed;
  }

  async sessions(userId: string): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.userSessions(userId), `(${this.now()}`, '+inf');
  }

  async everySession(): Promise<Array<{ user_id: string; session_id: string }>> {
    const out: Array<{ user_id: string; session_id: string }> = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', this.keys.allUserIndexesPattern(), 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const user_id = this.keys.userOfIndex(key);
        for (const session_id of await this.sessions(user_id)) out.push({ user_id, session_id });
      }
    } while (cursor !== '0');
    return out;
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (!this.options.ownsConnection) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

function throwFirstError(results: Array<[Error | null, unknown]> | null): void {
  if (results === null) throw new Error('Redis transaction was aborted');
  for (const [err] of results) if (err) throw err;
}
