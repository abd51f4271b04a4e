import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import {
  faultRig,
  TurnStream,
  activeJobs,
  assertIntact,
  assertStoredOnce,
  expectedFrom,
  failedJobs,
  faultEnv,
  freezeWhen,
  kill,
  pendingIn,
  processedIn,
  retry,
  turnsIn,
  until,
} from './helpers.js';

/**
 * docs/architecture.md, write path, "turns whose jobs have not completed are re-enqueued at start-up": the API process is
 * restarted with unfinished turns in its turn log — their jobs lost with Redis's memory, lost with the
 * in-process queue, or stranded half-run by dead workers — and the restarted process finishes every
 * one of them, exactly once. The restarted API also puts the unfinished turns back in their sessions'
 * short-term lists (a Redis that came back empty holds none of them).
 */
describe('faults: restart the API with unfinished turns in the turn log', () => {
  const rig = faultRig('nc-fault-restart-');
  const { dir, fleet } = rig;

  it('queued jobs lost (Redis flushed while the API was down): the restart re-enqueues them all', { timeout: 120_000 }, async () => {
    const tag = 'rs-flushed';
    const dbPath = join(dir, `${tag}.db`);
    const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag, extra: { NEURALCLEAVE_RECONCILE_AFTER_S: '60' } });
    // no worker yet: every acknowledged turn stays queued
    const serve = await fleet.serve(env);
    const stream = new TurnStream(serve.base, tag, 4);
    await until('600 turns acknowledged', () => stream.acknowledged.size >= 600, 60_000, 10);
    await stream.stop();
    await kill(serve);
    assert.equal(processedIn(dbPath), 0);
    const admin = new Redis(rig.redis.url);
    await admin.flushall();
    admin.disconnect();

    const again = await fleet.serve(env);
    const worker = await fleet.worker(env);
    const expected = expectedFrom(stream, stream.acknowledged);
    await until('every turn processed', () => pendingIn(dbPath) === 0, 60_000, 100);
    // the short-term lists came back with the start-up pass
    await assertStoredOnce(dbPath, expected, { url: rig.redis.url, prefix: tag });
    assert.deepEqual(await failedJobs(rig.redis.url, tag), []);
    for (const p of [again, worker]) await kill(p);
    assertIntact(dbPath);
  });

  it('in-process jobs lost (embedded default, no Redis): killed mid-stream, the restart finishes them', { timeout: 120_000 }, async () => {
    const tag = 'rs-embedded';
    const dbPath = join(dir, `${tag}.db`);
    const env = faultEnv({ sqlitePath: dbPath, extra: { NEURALCLEAVE_RECONCILE_AFTER_S: '60' } });
    const serve = await fleet.serve(env);
    const stream = new TurnStream(serve.base, tag, 8);
    await until('1000 turns acknowledged', () => stream.acknowledged.size >= 1000, 60_000, 5);
    // the kill lands while some accepted turns are not yet processed by the in-process workers
    await freezeWhen([serve], () => pendingIn(dbPath) > 0, 'an unfinished turn');
    await kill(serve);
    await stream.done();
    assert.deepEqual(stream.errors, []);

    const again = await fleet.serve(env);
    const retried = await retry(again.base, stream.unanswered);
    const expected = expectedFrom(stream, [...stream.acknowledged, ...retried]);
    await until('every turn processed', () => pendingIn(dbPath) === 0 && turnsIn(dbPath) === expected.size, 60_000, 100);
    await assertStoredOnce(dbPath, expected);
    await kill(again);
    assertIntact(dbPath);
  });

  it('jobs stranded by dead workers (API and workers killed together): the restart and one worker finish them', { timeout: 120_000 }, async () => {
    const tag = 'rs-stranded';
    const dbPath = join(dir, `${tag}.db`);
    const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag, extra: { NEURALCLEAVE_RECONCILE_AFTER_S: '60' } });
    const workers = await Promise.all([fleet.worker(env), fleet.worker(env)]);
    const serve = await fleet.serve(env);
    const stream = new TurnStream(serve.base, tag, 8);
    await until('1200 turns acknowledged and some processed', () => stream.acknowledged.size >= 1200 && processedIn(dbPath) >= 300, 60_000, 5);
    // the whole host dies at once, with turns unfinished and jobs in the workers' hands
    await freezeWhen([serve, ...workers], async () => pendingIn(dbPath) > 0 && (await activeJobs(rig.redis.url, tag)).length > 0, 'unfinished turns and running jobs');
    await Promise.all([kill(serve), ...workers.map(kill)]);
    await stream.done();
    assert.deepEqual(stream.errors, []);

    const again = await fleet.serve(env);
    const retried = await retry(again.base, stream.unanswered);
    const worker = await fleet.worker(env);
    const expected = expectedFrom(stream, [...stream.acknowledged, ...retried]);
    await until('every turn processed', () => pendingIn(dbPath) === 0 && turnsIn(dbPath) === expected.size, 60_000, 100);
    await assertStoredOnce(dbPath, expected, { url: rig.redis.url, prefix: tag });
    assert.deepEqual(await failedJobs(rig.redis.url, tag), []);
    for (const p of [again, worker]) await kill(p);
    assertIntact(dbPath);
  });
});
