import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startCli, stop } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { assertEachProcessedOnce, killAll, makeTurns, processedTurns, queueEnv, until, writeJsonl } from './helpers.js';

const TURNS = 5_000;

/**
 * docs/architecture.md, deployment and backends and write path with real processes: three `neuralcleave worker` processes and a producer (`ingest`)
 * share one Redis and one SQLite file; one worker is SIGKILLed mid-run. Its in-flight jobs stall
 * (their lock expires) and the survivors take them over; every turn ends embedded once and stored once.
 */
describe('BullMQ: three worker processes, one SIGKILLed mid-run', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    env = queueEnv({
      redisUrl: redis.url,
      sqlitePath: dbPath,
      extra: {
        // a killed worker's jobs come back within seconds instead of the default 30 s
        NEURALCLEAVE_WORKER_LOCK_DURATION_MS: '3000',
        NEURALCLEAVE_WORKER_STALLED_INTERVAL_MS: '1000',
      },
    });
  });
  after(async () => {
    killAll(children);
    await redis.stop(true);
  });

  it(`processes ${TURNS.toLocaleString('en-US')} turns exactly once`, { timeout: 120_000 }, async () => {
    const file = join(dir, 'turns.jsonl');
    const turns = makeTurns(TURNS, 'scale');
    writeJsonl(file, turns);

    const workers = await Promise.all(
      [0, 1, 2].map(() => startCli(['worker', '--queues', 'embed,persist', '--concurrency', '8'], env, /worker ready: consuming embed,persist/, 30_000, { spawned: (c) => children.add(c) })),
    );

    const ingest = runCli(['ingest', file, '--wait', '--json'], env);
    // kill one worker while there is still plenty to do
    await until('a fifth of the turns to be processed', () => processedTurns(dbPath) >= TURNS / 5, 60_000, 50);
    const victim = workers[0]!;
    const killedAt = processedTurns(dbPath);
    assert.ok(killedAt < TURNS, 'the worker was killed mid-run');
    await stop(victim.child, 'SIGKILL');

    const result = await ingest;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { file, turns: TURNS, accepted: TURNS, duplicates: 0, waited: true });

    assertEachProcessedOnce(dbPath, turns.map((t) => t.id));

    // the queues are drained and nothing failed; the doctor of the survivors' setup says so
    const doctor = await runCli(['doctor', '--json'], env);
    assert.equal(doctor.code, 0, doctor.stderr);
    const report = JSON.parse(doctor.stdout) as { backends: Record<string, { backend: string; state: string }>; queues: Record<string, { waiting: number; active: number; failed: number; delayed: number }> };
    assert.equal(report.backends.queue!.backend, 'bullmq');
    assert.equal(report.backends.short_term!.backend, 'redis');
    for (const q of ['embed', 'persist'] as const) {
      const c = report.queues[q]!;
      assert.deepEqual([c.waiting, c.active, c.delayed, c.failed], [0, 0, 0, 0], `${q} drained without failures`);
    }

    // the killed worker's in-flight jobs were taken over through BullMQ's stalled-job check
    const survivors = workers.slice(1).map((w) => w.output()).join('\n');
    assert.match(survivors, /job stalled \(its worker died or blocked\); moved back to wait/);
    // the survivors shut down gracefully on SIGTERM
    for (const w of workers.slice(1)) assert.equal(await stop(w.child, 'SIGTERM'), 0, w.output());
  });
});
