import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli, stop } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, queueEnv, readDb, until } from '../queue/helpers.js';

interface RunRow {
  run_id: string;
  trigger: string;
  outcome: string;
  pid: number;
}

const OCCURRENCES = 10;

/** Every invocation of the archive processor by the scheduler, oldest first (one row per invocation). */
function scheduledRuns(dbPath: string): RunRow[] {
  try {
    return readDb(dbPath, (db) => db.prepare("SELECT run_id, trigger, outcome, pid FROM archive_runs WHERE trigger = 'schedule' ORDER BY seq").all() as RunRow[]);
  } catch {
    return []; // the file or the table does not exist yet
  }
}

/**
 * docs/architecture.md, compaction and archival with real processes: three `neuralcleave worker` processes on one Redis each register the
 * archival job scheduler (a pattern firing every second); each occurrence must run exactly once —
 * not once per worker, and none twice. The archive processor writes one `archive_runs` row per
 * invocation, keyed by the occurrence's job id, so a duplicate invocation would show as a second row.
 */
describe('archival schedule: three workers, one run per occurrence', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    env = queueEnv({ redisUrl: redis.url, sqlitePath: dbPath, extra: { NEURALCLEAVE_ARCHIVAL_CRON: '* * * * * *' } });
  });
  after(async () => {
    killAll(children);
    await redis.stop(true);
  });

  it(`runs each of ${OCCURRENCES} occurrences exactly once`, { timeout: 120_000 }, async () => {
    // started one after another, so each registers the scheduler while the others already consume
    const workers: ChildProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const w = await startCli(['worker', '--queues', 'archive', '--concurrency', '2'], env, /worker ready: consuming archive/);
      children.add(w.child);
      workers.push(w.child);
    }
    const firstCounted = scheduledRuns(dbPath).length;
    await until(`${OCCURRENCES} occurrences after all three workers registered`, () => new Set(scheduledRuns(dbPath).map((r) => r.run_id)).size >= firstCounted + OCCURRENCES, 60_000, 200);
    await Promise.all(workers.map((w) => stop(w)));

    const runs = scheduledRuns(dbPath);
    const byOccurrence = new Map<string, RunRow[]>();
    for (const r of runs) byOccurrence.set(r.run_id, [...(byOccurrence.get(r.run_id) ?? []), r]);
    assert.ok(byOccurrence.size >= OCCURRENCES, `${byOccurrence.size} occurrences ran`);
    for (const [runId, rows] of byOccurrence) {
      assert.equal(rows.length, 1, `occurrence ${runId} ran ${rows.length} times: ${JSON.stringify(rows)}`);
      assert.equal(rows[0]!.outcome, 'done', `occurrence ${runId} completed`);
    }
    // one scheduler, not one per worker: occurrences are distinct seconds
    const times = [...byOccurrence.keys()].map((id) => Number(id.split(':').pop()));
    assert.ok(times.every((t) => Number.isFinite(t) && t % 1000 === 0), `job ids carry the occurrence time: ${[...byOccurrence.keys()].slice(0, 3).join(', ')}`);
    assert.equal(new Set(times).size, times.length);
    const pids = new Set(runs.map((r) => r.pid));
    process.stderr.write(`${byOccurrence.size} occurrences, run by ${pids.size} worker process(es)\n`);
  });
});
