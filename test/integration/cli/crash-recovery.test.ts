import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { writeConversations } from '../../fixtures/conversations.js';
import { CLI, runCli, startCli, stop } from '../../helpers/cli.js';
import { readDb } from '../../helpers/read-db.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';

const TOTAL = 12_000;

function query<T>(dbPath: string, sql: string): T {
  return readDb(dbPath, (db) => db.prepare(sql).get() as T);
}

function turnsIn(dbPath: string): number {
  try {
    return query<{ n: number }>(dbPath, 'SELECT count(*) AS n FROM turns').n;
  } catch {
    return 0; // not created yet
  }
}

/** Every acknowledged turn is processed exactly once: one vector each, one entry per important distinct text. */
function assertExactlyOnce(dbPath: string, acknowledged: number): void {
  const c = query<{ turns: number; pending: number; vectors: number; distinct_vectors: number; entries: number; expected_entries: number; orphans: number }>(
    dbPath,
    `SELECT (SELECT count(*) FROM turns) AS turns,
            (SELECT count(*) FROM turns WHERE persisted_at IS NULL OR embedded_with IS NULL) AS pending,
            (SELECT count(*) FROM vectors) AS vectors,
            (SELECT count(DISTINCT id) FROM vectors) AS distinct_vectors,
            (SELECT count(*) FROM entries) AS entries,
            (SELECT count(*) FROM (SELECT DISTINCT user_id, content_hash FROM turns WHERE importance >= 0.3 OR pinned = 1)) AS expected_entries,
            (SELECT count(*) FROM entries WHERE id NOT IN (SELECT id FROM turns)) +
            (SELECT count(*) FROM vectors WHERE id NOT IN (SELECT id FROM turns)) AS orphans`,
  );
  assert.equal(c.turns, acknowledged, 'the turn log holds exactly the acknowledged turns');
  assert.equal(c.pending, 0, 'no turn left unprocessed');
  assert.equal(c.vectors, acknowledged, 'one vector per turn');
  assert.equal(c.distinct_vectors, acknowledged);
  assert.equal(c.entries, c.expected_entries, 'one long-term entry per important distinct text');
  assert.equal(c.orphans, 0, 'nothing written for a turn that was not acknowledged');
}

describe('crash recovery: SIGKILL during ingest, then restart (real processes, embedded defaults)', () => {
  const dir = tmpDir();
  const file = join(dir, 'turns.jsonl');
  before(() => writeConversations(file, { users: 20, sessions: 20, turnsPerSession: TOTAL / 400, seed: 11 }));

  for (const killAt of [700, 4_000, 9_000]) {
    it(`loses nothing acknowledged when killed after ~${killAt} turns`, async () => {
      const dbPath = join(dir, `kill-${killAt}.db`);
      const env = { NEURALCLEAVE_SQLITE_PATH: dbPath, NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'warn', NEURALCLEAVE_PORT: '0' };
      const ingest = spawn(process.execPath, [CLI, 'ingest', file], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
      await until(`${killAt} turns in the log`, () => turnsIn(dbPath) >= killAt || ingest.exitCode !== null, 120_000, 25);
      ingest.kill('SIGKILL');
      await new Promise((r) => ingest.once('exit', r));
      const acknowledged = turnsIn(dbPath);
      assert.ok(acknowledged >= killAt && acknowledged < TOTAL, `killed mid-ingest (${acknowledged} acknowledged)`);

      // restart: serve re-enqueues every unfinished turn from the turn log at start-up
      const serve = await startCli(['serve'], env, /listening on/);
      try {
        await until('recovery', () => query<{ n: number }>(dbPath, 'SELECT count(*) AS n FROM turns WHERE persisted_at IS NULL OR embedded_with IS NULL').n === 0, 120_000);
      } finally {
        await stop(serve.child);
      }
      assertExactlyOnce(dbPath, acknowledged);

      // the rest of the file goes in once more; what was stored is not stored again
      const r = await runCli(['ingest', file, '--wait', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { file, turns: TOTAL, accepted: TOTAL - acknowledged, duplicates: acknowledged, waited: true });
      assertExactlyOnce(dbPath, TOTAL);
    });
  }
});
