import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Db } from './db.js';
import { MIGRATIONS } from './migrations.js';

/** What `doctor` says about the SQLite file: which one, how big, and whether this process can write it. */
export interface SqliteFileReport {
  path: string;
  bytes: number;
  wal_bytes: number;
  journal_mode: string;
  schema_version: number;
  /** the newest migration this build knows; a file ahead of it was written by a newer build */
  latest_version: number;
  /** true when this process could take the write lock (and the file and its folder are writable) */
  writable: boolean;
  problem?: string;
  /** rows per memory table */
  rows: { turns: number; entries: Record<string, number>; vectors: number };
}

const PROBE_BUSY_MS = 1000;

export function inspectSqliteFile(db: Db, path: string): SqliteFileReport {
  const absolute = path === ':memory:' ? path : resolve(path);
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  const report: SqliteFileReport = {
    path: absolute,
    bytes: size(absolute),
    wal_bytes: size(`${absolute}-wal`),
    journal_mode: String(db.pragma('journal_mode', { simple: true })),
    schema_version: db.pragma('user_version', { simple: true }) as number,
    latest_version: MIGRATIONS[MIGRATIONS.length - 1]!.version,
    writable: false,
    rows: { turns: 0, entries: {}, vectors: 0 },
  };
  report.rows.turns = (db.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
  for (const r of db.prepare('SELECT kind, count(*) AS n FROM entries GROUP BY kind').all() as Array<{ kind: string; n: number }>) report.rows.entries[r.kind] = r.n;
  report.rows.vectors = (db.prepare('SELECT count(*) AS n FROM vectors').get() as { n: number }).n;

  try {
    if (absolute !== ':memory:') {
      accessSync(absolute, constants.W_OK);
      // WAL needs to create -wal and -shm files beside the database
      accessSync(dirname(absolute), constants.W_OK);
    }
    // the real test: take the write lock and give it back, without waiting long for another writer
    const busy = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma(`busy_timeout = ${PROBE_BUSY_MS}`);
    try {
      db.prepare('BEGIN IMMEDIATE').run();
      db.prepare('ROLLBACK').run();
    } finally {
      db.pragma(`busy_timeout = ${busy}`);
    }
    report.writable = true;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    report.problem = e.code === 'SQLITE_BUSY' ? 'another process held the write lock for over a second (busy, not necessarily read-only)' : e.message;
  }
  if (report.schema_version > report.latest_version) {
    report.problem = `the file's schema version ${report.schema_version} is newer than this build's ${report.latest_version}`;
  }
  return report;
}
