import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, type RedisHandle } from '../helpers/redis.js';
import { tmpDir } from '../helpers/tmp.js';
import {
  Fleet,
  TurnStream,
  assertIntact,
  assertStoredOnce,
  count,
  expectedFrom,
  failedJobs,
  faultEnv,
  kill,
  pendingIn,
  retry,
  turnIds,
  turnsIn,
  until,
} from './helpers.js';

/**
 * docs/architecture.md, write path with real processes: `serve` (Redis queues, no in-process workers) is SIGKILLed while
 * clients stream `POST /sessions/:id/turns` at it, and two `worker` processes keep running. Every turn
 * that got a 202 must survive; a request in flight at the kill may or may not be durable, and the
 * client retries it with the same ids. After a restart, everything is stored exactly once in every
 * tier, and nothing that was never acknowledged left a vector or an entry behind.
 */
/** ids of the clients connected to Redis now */
async function clientIds(admin: Redis): Promise<Set<string>> {
  const list = (await admin.client('LIST')) as string;
  return new Set([...list.matchAll(/^id=(\d+) /gm)].map((m) => m[1]!));
}

describe('faults: SIGKILL the API process during a stream of turn writes', () => {
  const dir = tmpDir('nc-fault-api-');
  const fleet = new Fleet();
  let redis: RedisHandle;
  before(async () => {
    redis = await startRedis();
  });
  const closers: Array<() => void> = [];
  after(async () => {
    closers.forEach((c) => c());
    fleet.killAll();
    await redis?.stop(true);
  });

  // kill points: early (workers idle, queue short); mid-stream with a deep queue; and with requests held
  // between the turn log and the short-term write (Redis paused): durable, not acknowledged, not in
  // the short-term tier — the client's retry must complete them
  const KILL_POINTS = [
    { name: 'early, after ~150 acknowledged turns', killAt: 150, pauseRedis: false },
    { name: 'mid-stream, after ~1500 acknowledged turns', killAt: 1500, pauseRedis: false },
    { name: 'with writes held between the turn log and Redis, after ~500', killAt: 500, pauseRedis: true },
  ];
  for (const { name, killAt, pauseRedis } of KILL_POINTS) {
    it(`loses no acknowledged turn when killed ${name}`, { timeout: 150_000 }, async () => {
      const tag = `api${killAt}${pauseRedis ? 'p' : ''}`;
      const dbPath = join(dir, `${tag}.db`);
      // the default delay before the periodic pass re-enqueues a turn: the restarted API's start-up pass
      // is what finishes the turns cut short (tests/faults/redis-restart covers the periodic pass)
      const env = faultEnv({ sqlitePath: dbPath, redisUrl: redis.url, prefix: tag, extra: { NEURALCLEAVE_RECONCILE_AFTER_S: '60' } });
      const workers = await Promise.all([fleet.worker(env), fleet.worker(env)]);
      const admin = new Redis(redis.url);
      closers.push(() => admin.disconnect());
      const before = await clientIds(admin);
      const serve = await fleet.serve(env);
      const serveClients = [...(await clientIds(admin))].filter((id) => !before.has(id));

      const stream = new TurnStream(serve.base, tag, 8);
      await until(`${killAt} acknowledged turns`, () => stream.acknowledged.size >= killAt || stream.errors.length > 0, 90_000, 5);
      if (pauseRedis) {
        // Redis stops answering writes: requests in flight commit to the turn log, then wait on the
        // short-term write; the kill lands there
        await admin.client('PAUSE', 5000, 'WRITE');
        await until('writes durable but not acknowledged', () => turnsIn(dbPath) > stream.acknowledged.size, 4000, 20);
      }
      await kill(serve);
      if (pauseRedis) {
        // the dead process's connections go with the commands it had sent, unexecuted (as when the
        // kill lands before they leave the process)
        for (const id of serveClients) await admin.client('KILL', 'ID', id).catch(() => 0);
        await admin.client('UNPAUSE');
      }
      admin.disconnect();
      await stream.done();
      assert.deepEqual(stream.errors, [], 'every request answered before the kill was a 202');
      const acknowledged = new Set(stream.acknowledged);
      assert.ok(stream.unanswered.length > 0, 'requests were in flight at the kill');

      // right after the kill: every acknowledged turn is durable; nothing unsent is in the log
      const logged = turnIds(dbPath);
      for (const id of acknowledged) assert.ok(logged.has(id), `acknowledged turn ${id} is in the turn log`);
      for (const id of logged) assert.ok(stream.sent.has(id), `${id} in the turn log was sent`);
      assert.equal(count(dbPath, 'SELECT count(*) AS n FROM vectors WHERE id NOT IN (SELECT id FROM turns)'), 0);
      assert.equal(count(dbPath, "SELECT count(*) AS n FROM entries WHERE kind = 'turn' AND id NOT IN (SELECT id FROM turns)"), 0);

      // restart; the client retries what got no answer, with the same ids
      const again = await fleet.serve(env);
      const retried = await retry(again.base, stream.unanswered);
      const expected = expectedFrom(stream, [...acknowledged, ...retried]);
      await until('every turn processed', () => pendingIn(dbPath) === 0 && count(dbPath, 'SELECT count(*) AS n FROM turns') === expected.size, 90_000, 100);

      await assertStoredOnce(dbPath, expected, { url: redis.url, prefix: tag });
      assert.deepEqual(await failedJobs(redis.url, tag), [], 'no job failed');
      for (const p of [again, ...workers]) await kill(p);
      assertIntact(dbPath);
    });
  }
});
