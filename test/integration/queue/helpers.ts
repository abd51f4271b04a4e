import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { readDb } from '../../helpers/read-db.js';
import { GENEROUS_BUDGETS } from '../../helpers/budgets.js';

export { readDb };
export { until } from '../../helpers/until.js';

/** The configuration every process of one test shares, as NEURALCLEAVE_* variables. */
export function queueEnv(o: { redisUrl?: string; sqlitePath: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    ...(o.redisUrl ? { NEURALCLEAVE_REDIS_URL: o.redisUrl } : {}),
    NEURALCLEAVE_SQLITE_PATH: o.sqlitePath,
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'warn',
    ...GENEROUS_BUDGETS,
    ...o.extra,
  };
}

export interface TestTurn {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  content: string;
  importance: number;
}

/**
 * `n` turns with ids and distinct texts, spread over users and sessions (few turns per session, so no
 * compaction is due), important enough to be stored in the long-term tier.
 */
export function makeTurns(n: number, tag: string): TestTurn[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    user_id: `user-${i % 7}`,
    session_id: `${tag}-session-${i % 500}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${tag} note ${i}: the courier brings parcel ${i * 7919} to dock ${i % 13} on day ${i % 31}`,
    importance: 0.9,
  }));
}

export function writeJsonl(file: string, turns: readonly TestTurn[]): void {
  writeFileSync(file, `${turns.map((t) => JSON.stringify(t)).join('\n')}\n`);
}


/** how many turns have completed both jobs (0 while the file does not exist yet) */
export function processedTurns(dbPath: string): number {
  try {
    return readDb(dbPath, (db) => (db.prepare('SELECT count(*) AS n FROM turns WHERE embedded_with IS NOT NULL AND persisted_at IS NOT NULL').get() as { n: number }).n);
  } catch {
    return 0;
  }
}

/**
 * Every one of `ids` is in the turn log, embedded once (one vector) and stored once (one long-term
 * entry); nothing is missing, nothing duplicated, nothing written for a turn not in `ids`.
 */
export function assertEachProcessedOnce(dbPath: string, ids: readonly string[]): void {
  readDb(dbPath, (db) => {
    db.exec('CREATE TEMP TABLE expected (id TEXT PRIMARY KEY)');
    const insert = db.prepare('INSERT INTO expected (id) VALUES (?)');
    db.transaction(() => ids.forEach((id) => insert.run(id)))();
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    assert.equal(one('SELECT count(*) AS n FROM expected'), ids.length, 'ids are distinct');
    assert.equal(one('SELECT count(*) AS n FROM turns'), ids.length, 'the turn log holds exactly these turns');
    assert.equal(one('SELECT count(*) AS n FROM expected WHERE id NOT IN (SELECT id FROM turns)'), 0, 'no acknowledged turn missing from the turn log');
    assert.equal(one('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL'), 0, 'no turn left unprocessed');
    assert.equal(one('SELECT count(*) AS n FROM vectors'), ids.length, 'one vector per turn');
    assert.equal(one('SELECT count(DISTINCT id) AS n FROM vectors'), ids.length, 'no turn embedded twice');
    assert.equal(one('SELECT count(*) AS n FROM expected WHERE id NOT IN (SELECT id FROM vectors)'), 0, 'no turn without its vector');
    assert.equal(one("SELECT count(*) AS n FROM entries WHERE kind = 'turn'"), ids.length, 'one long-term entry per turn');
    assert.equal(one("SELECT count(DISTINCT id) AS n FROM entries WHERE kind = 'turn'"), ids.length, 'no turn stored twice');
    assert.equal(one("SELECT count(*) AS n FROM expected WHERE id NOT IN (SELECT id FROM entries WHERE kind = 'turn')"), 0, 'no turn without its entry');
  });
}

/** SIGKILLs whatever is still running: `after` hooks call it so no process outlives its test file. */
export function killAll(children: Iterable<ChildProcess>): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

