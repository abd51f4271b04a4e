import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { connectRedis } from '../../../../src/adapters/redis/connection.js';
import { RedisKeys } from '../../../../src/adapters/redis/keys.js';
import { RedisShortTermStore } from '../../../../src/adapters/redis/short-term.js';
import { startRedis, type RedisHandle } from '../../../helpers/redis.js';
import { turn } from '../../../helpers/turns.js';

describe('RedisShortTermStore beyond the contract', () => {
  let redis: RedisHandle;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis.stop());

  it('keeps a session under a key built from encoded ids, with a TTL, and a user index', async () => {
    const client = new Redis(redis.url);
    const keys = new RedisKeys('nc');
    const store = new RedisShortTermStore(client, keys, { ttlSeconds: 120, maxTurns: 3, ownsConnection: true });
    const user = 'we:ird*user';
    const session = 'sess [1]';
    await store.push([turn(user, session, 'a'), turn(user, session, 'b')]);
    const key = keys.session(user, session);
    assert.equal(await client.llen(key), 2);
    const ttl = await client.pttl(key);
    assert.ok(ttl > 100_000 && ttl <= 120_000, `ttl ${ttl}`);
    assert.deepEqual(await store.sessions(user), [session]);
    assert.deepEqual(await store.sessions('we'), [], 'a prefix of the user id is another user');
    // a batch larger than maxTurns keeps the newest
    await store.push(Array.from({ length: 10 }, (_, i) => turn(user, session, `n${i}`)));
    assert.deepEqual((await store.recent(user, session)).map((t) => t.content), ['n7', 'n8', 'n9']);
    await store.close();
  });

  it('fails a write at once while Redis is away instead of hanging the request', async () => {
    const probe = await connectRedis(redis.url, { connectTimeoutMs: 1000, commandTimeoutMs: 1000 }, pino({ level: 'silent' }));
    assert.ok(probe.ok);
    const store = new RedisShortTermStore(probe.client, new RedisKeys('nc'), { ttlSeconds: 60, maxTurns: 10, ownsConnection: true });
    const status = (): string => probe.client.status;
    await redis.stop();
    while (status() === 'ready') await new Promise((r) => setTimeout(r, 20));
    await assert.rejects(store.push([turn('u', 's', 'lost write')]));
    await assert.rejects(store.recent('u', 's'));
    assert.equal(await store.ping(), false);
    await redis.start();
    while (status() !== 'ready') await new Promise((r) => setTimeout(r, 50));
    await store.push([turn('u', 's', 'after')]);
    assert.deepEqual((await store.recent('u', 's')).map((t) => t.content), ['after']);
    await store.close();
  });
});
