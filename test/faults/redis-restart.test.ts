import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI } from '../helpers/cli.js';
import {
  faultRig,
  assertIntact, assertStoredOnce, failedJobs, faultEnv, kill, processedIn, sleep, turnsIn, until, writeTurnsFile } from './helpers.js';

const TURNS = 2000;

/**
 * docs/architecture.md, deployment and backends and write path with real processes: `redis-server` (no persistence: it comes back empty, every queued
 * job gone) is stopped and started again while `neuralcleave ingest --wait` writes turns and two
 * workers consume them. Ingest goes on while Redis is away (turns are durable in the turn log), the
 * workers reconnect, the reconcilers re-enqueue what the outage lost, and every turn ends stored
 * exactly once. The short-term tier lives in Redis and is lost with it: only "never twice" is checked.
 */
describe('faults: stop and restart redis-server during ingest', () => {
  const rig = faultRig('nc-fault-redis-');
  const { dir, fleet } = rig;

  const POINTS = [
    { name: 'stopped (SIGTERM) early in the ingest, down 1 s', atTurns: 1, atProcessed: 0, hard: false, downMs: 1000 },
    { name: 'killed (SIGKILL) mid-ingest, down 4 s', atTurns: 1000, atProcessed: 0, hard: true, downMs: 4000 },
    { name: 'killed (SIGKILL) after the last turn is written, with the queues still full', atTurns: TURNS, atProcessed: 1, hard: true, downMs: 2000 },
  ];
  for (const p of POINTS) {
    it(`loses no turn when Redis is ${p.name}`, { timeout: 180_000 }, async () => {
      const tag = `rr${p.atTurns}${p.hard ? 'k' : 't'}`;
      const dbPath = join(dir, `${tag}.db`);
      const file = join(dir, `${tag}.jsonl`);
      const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag, extra: { NEURALCLEAVE_REDIS_COMMAND_TIMEOUT_MS: '1000' } });
      const expected = writeTurnsFile(file, tag, TURNS);
      const workers = await Promise.all([fleet.worker(env), fleet.worker(env)]);

      const ingest = spawn(process.execPath, [CLI, 'ingest', file, '--wait', '--json'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      fleet.track(ingest);
      let stdout = '';
      let stderr = '';
      ingest.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      ingest.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => ingest.once('exit', r));

      await until(`${p.atTurns} turns written`, () => turnsIn(dbPath) >= p.atTurns, 90_000, 10);
      if (p.atProcessed > 0) await until('some processed', () => processedIn(dbPath) >= p.atProcessed, 60_000, 10);
      const written = turnsIn(dbPath);
      const unprocessed = written - processedIn(dbPath);
      await rig.redis.stop(p.hard);
      await sleep(p.downMs);
      await rig.redis.start();

      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('timeout'), 150_000)))]);
      clearTimeout(timer);
      assert.equal(code, 0, `ingest --wait: ${stderr.slice(-2000)}`);
      assert.deepEqual(JSON.parse(stdout), { file, turns: TURNS, accepted: TURNS, duplicates: 0, waited: true });
      assert.ok(unprocessed > 0, 'Redis went away with work queued');
      if (p.atTurns < TURNS) assert.ok(written < TURNS, `Redis went away mid-ingest (${written} of ${TURNS} turns written)`);

      await assertStoredOnce(dbPath, expected, { url: rig.redis.url, prefix: tag, exempt: new Set(expected.keys()) });
      assert.deepEqual(await failedJobs(rig.redis.url, tag), [], 'no job failed');
      for (const w of workers) await kill(w);
      assertIntact(dbPath);
    });
  }
});
