import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { runCli, startCli, stop } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, makeTurns, queueEnv, until, writeJsonl } from './helpers.js';

interface Doctor {
  queues: Record<string, { waiting: number; active: number; failed: number }>;
  turn_log: { total: number; pending_embed: number; pending_persist: number };
}

async function doctor(env: Record<string, string>): Promise<Doctor> {
  const r = await runCli(['doctor', '--json'], env);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Doctor;
}

describe('CLI with Redis: serve leaves the queues to workers; failed jobs are listed and retried', () => {
  const dir = tmpDir();
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    killAll(children);
    await redis.stop(true);
  });

  it('serve runs no workers with Redis unless serve_runs_workers is set', { timeout: 90_000 }, async () => {
    const env = queueEnv({ redisUrl: redis.url, sqlitePath: join(dir, 'serve.db'), extra: { NEURALCLEAVE_PORT: '0', NEURALCLEAVE_REDIS_PREFIX: 'serve-test' } });
    const file = join(dir, 'turns.jsonl');
    writeJsonl(file, makeTurns(200, 'srv'));

    const plain = await startCli(['serve'], env, /listening on/);
    children.add(plain.child);
    const ingest = await runCli(['ingest', file, '--json'], env);
    assert.equal(ingest.code, 0, ingest.stderr);
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await doctor(env);
    assert.equal(waiting.queues.embed!.waiting, 200, 'nobody consumes: the jobs wait for a worker');
    assert.equal(waiting.turn_log.pending_embed, 200);
    assert.equal(await stop(plain.child), 0);

    const consuming = await startCli(['serve'], { ...env, NEURALCLEAVE_SERVE_RUNS_WORKERS: 'true' }, /listening on/);
    children.add(consuming.child);
    await until('serve to drain the queues', async () => {
      const d = await doctor(env);
      return d.turn_log.pending_embed === 0 && d.turn_log.pending_persist === 0 && d.queues.embed!.waiting === 0;
    }, 60_000, 250);
    assert.equal(await stop(consuming.child), 0);
  });

  it('jobs failed lists a failed job and jobs retry runs it again', { timeout: 90_000 }, async () => {
    const env = queueEnv({ redisUrl: redis.url, sqlitePath: join(dir, 'jobs.db'), extra: { NEURALCLEAVE_REDIS_PREFIX: 'jobs-test' } });
    // a job no processor can run: written by a producer that skipped validation
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const raw = new Queue('persist', { connection: conn, prefix: 'jobs-test:bull' });
    await raw.add('persist', { not_a_turn: true }, { jobId: 'broken-1', attempts: 3 });
    await raw.close();
    conn.disconnect();

    const worker = await startCli(['worker', '--queues', 'persist'], env, /worker ready/);
    children.add(worker.child);
    await until('the job to fail', async () => (await doctor(env)).queues.persist!.failed === 1, 30_000, 200);

    const listed = await runCli(['jobs', 'failed', '--queue', 'persist', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const failed = JSON.parse(listed.stdout) as Array<{ queue: string; jobId: string; attempts: number; reason: string; data: unknown }>;
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.jobId, 'broken-1');
    assert.equal(failed[0]!.attempts, 1, 'a malformed job is not retried');
    assert.match(failed[0]!.reason, /invalid persist job payload: .*turn_id/);
    assert.deepEqual(failed[0]!.data, { not_a_turn: true });

    const human = await runCli(['jobs', 'failed'], env);
    assert.match(human.stdout, /persist\s+broken-1\s+attempts 1/);

    const retried = await runCli(['jobs', 'retry', '--queue', 'persist', '--json'], env);
    assert.equal(retried.code, 0, retried.stderr);
    assert.deepEqual(JSON.parse(retried.stdout), { queue: 'persist', retried: 1 });
    // it ran again (and, still malformed, failed again)
    await until('the retried job to run', () => worker.output().split('job failed permanently').length - 1 >= 2, 30_000, 100);

    const usage = await runCli(['jobs', 'retry'], env);
    assert.equal(usage.code, 2, 'the queue is required');
    const unknown = await runCli(['jobs', 'failed', '--queue', 'nope'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown queue "nope"/);
  });
});
