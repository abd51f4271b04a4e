import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import {
  faultRig,
  activeJobs, assertIntact, assertStoredOnce, failedJobs, faultEnv, freezeWhen, kill, pendingIn, processedIn, until, withQueues, writeTurnsFile, type Proc } from './helpers.js';

const TURNS = 3000;

/**
 * Freezes a worker (SIGSTOP) at a moment it holds jobs — BullMQ shows them active and, stopped, it
 * can finish none — and returns their ids. It is the only consumer, so the active jobs are its own.
 */
async function freezeHoldingJobs(worker: Proc, url: string, prefix: string): Promise<string[]> {
  let held: string[] = [];
  await freezeWhen([worker], async () => (held = await activeJobs(url, prefix)).length > 0, 'the worker holding a job');
  return held;
}

/**
 * docs/architecture.md, write path with real processes: a `worker` is SIGKILLed while it holds jobs (some half done: a vector
 * written but not yet recorded in the turn log, an entry stored but the turn not marked). Its jobs stay
 * locked until the lock expires; another worker's stalled-job check hands them back and they run
 * again. Every turn ends stored exactly once in every tier, and no job fails.
 */
describe('faults: SIGKILL a worker while it holds jobs', () => {
  const rig = faultRig('nc-fault-worker-');
  const { dir, fleet } = rig;

  for (const share of [0.1, 0.45, 0.8]) {
    it(`finishes every turn exactly once when the worker is killed at ~${share * 100}% processed`, { timeout: 150_000 }, async () => {
      const tag = `wk${share * 100}`;
      const dbPath = join(dir, `${tag}.db`);
      const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag });
      const expected = writeTurnsFile(join(dir, `${tag}.jsonl`), tag, TURNS);
      // every turn acknowledged (ingest exits 0 once all are durable) and queued, nobody consuming yet
      const ingest = await runCli(['ingest', join(dir, `${tag}.jsonl`), '--json'], env);
      assert.equal(ingest.code, 0, ingest.stderr);

      const victim = await fleet.worker(env, ['--queues', 'embed,persist', '--concurrency', '16']);
      await until(`${share * 100}% processed`, () => processedIn(dbPath) >= share * TURNS, 90_000, 10);
      const held = await freezeHoldingJobs(victim, rig.redis.url, tag);
      const processedAtKill = processedIn(dbPath);
      await kill(victim);
      assert.ok(held.length > 0 && processedAtKill < TURNS, `killed holding ${held.length} jobs with ${processedAtKill} turns processed`);

      const survivor = await fleet.worker(env);
      await until('every turn processed', () => pendingIn(dbPath) === 0, 90_000, 100);
      await assertStoredOnce(dbPath, expected, { url: rig.redis.url, prefix: tag });
      // the dead worker's jobs came back through the stalled-job check, and ran once more without failing
      await until('the stalled jobs reported', () => /job stalled/.test(survivor.output()), 10_000, 100);
      assert.deepEqual(await failedJobs(rig.redis.url, tag), [], 'no job failed');
      await kill(survivor);
      assertIntact(dbPath);
    });
  }
});

/** whether a job of `ids` is active again after a stall (taken back by another worker) */
function retaken(url: string, prefix: string, ids: ReadonlySet<string>): Promise<boolean> {
  return withQueues(url, prefix, async (queues) => {
    for (const q of queues.values()) {
      for (const id of await q.getRanges(['active'], 0, -1)) {
        if (!ids.has(id)) continue;
        const job = await q.getJob(id);
        if (job && job.stalledCounter >= 1) return true;
      }
    }
    return false;
  });
}

describe('faults: two workers killed in turn while holding the same jobs', () => {
  const rig = faultRig('nc-fault-worker2-');
  const { dir, fleet } = rig;

  // before the fix, the reconciler's re-enqueue was a no-op for a job BullMQ kept as failed: the turn
  // stayed pending for good
  it('a job whose worker died twice still gets its turn processed', { timeout: 150_000 }, async () => {
    const tag = 'wk2';
    const dbPath = join(dir, `${tag}.db`);
    const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag });
    const expected = writeTurnsFile(join(dir, `${tag}.jsonl`), tag, 1000);
    const ingest = await runCli(['ingest', join(dir, `${tag}.jsonl`), '--json'], env);
    assert.equal(ingest.code, 0, ingest.stderr);

    const first = await fleet.worker(env, ['--queues', 'embed,persist', '--concurrency', '16']);
    await until('some turns processed', () => processedIn(dbPath) >= 100, 90_000, 10);
    const held = new Set(await freezeHoldingJobs(first, rig.redis.url, tag));
    await kill(first);

    // the second worker takes the dead one's jobs back; it runs in slices of a few milliseconds and is
    // killed in the slice where it holds one of them again, before it can finish it
    const second = await fleet.worker(env, ['--queues', 'embed,persist', '--concurrency', '16']);
    await freezeWhen([second], () => retaken(rig.redis.url, tag, held), "the second worker holding one of the first one's jobs", 5000);
    await kill(second);
    const survivor = await fleet.worker(env);
    await until('every turn processed', () => pendingIn(dbPath) === 0, 60_000, 200).catch(async (err) => {
      throw new Error(`${(err as Error).message}; failed jobs: ${JSON.stringify((await failedJobs(rig.redis.url, tag)).slice(0, 3))}`);
    });
    await assertStoredOnce(dbPath, expected, { url: rig.redis.url, prefix: tag });
    // the double stall happened: BullMQ failed the job ("stalled more than allowable limit") and the
    // reconciler replaced it, or the second worker had finished the turn's writes before it died. Waited
    // for: when the second worker had finished them, every turn is processed before the dead worker's
    // lock expires and the stalled-job check runs (the assertion came too early once in CI)
    await until('a job stalled twice', async () => {
      if (/failed jobs of turns still unfinished in the turn log are run again/.test(survivor.output())) return true;
      return (await failedJobs(rig.redis.url, tag)).some((j) => /stalled more than allowable limit/.test(j.reason));
    }, 30_000, 200);
    await kill(survivor);
  });
});
