import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isBusy } from './errors.js';
import { MIGRATIONS } from './migrations.js';
import { registerOwnedText } from './owned-text.js';

export type Db = Database.Database;

/**
 * Bytes of the file a connection reads through mmap instead of read(): a retrieval's row reads land
 * on pages all over the file (one user's rows are interleaved with everyone's), and through read()
 * each costs a syscall and a copy into SQLite's small page cache — 44 vector rows cost 0.57 ms of CPU
 * that way and 0.38 ms mapped, at 100k rows of 1,000 users. The pages are the OS's file cache,
 * shared by every process on the file, not memory of this one. Writes still go through write().
 */
export const MMAP_BYTES = 1 << 30;

/** whether another connection (a thread's) can open this database: a file, not an in-memory or temporary one */
export function onFile(db: Db): boolean {
  return !db.memory && db.name !== '' && db.name !== ':memory:';
}

/**
 * A connection of a thread that writes to a file its process has opened (and migrated) already: the
 * text index's merge (text-index-merge.ts). Pages the merge frees are zeroed, as every connection's.
 */
export function openThreadWriter(path: string): Db {
  const db = new Database(path, { fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  db.pragma('secure_delete = ON');
  registerOwnedText(db);
  return db;
}

/**
 * Opens (creating when needed) the one SQLite file and brings its schema up to date. WAL and a busy
 * timeout let the processes of one host share it (docs/architecture.md, deployment and backends).
 */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    // created owner-only, as exports are: it holds every user's memories. SQLite gives the -wal and
    // -shm files the database file's mode; an existing file keeps the mode its owner gave it
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new Database(path);
  db.pragma('busy_timeout = 10000');
  switchToWal(db);
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // deleted and overwritten rows are zeroed, not left in free space: an erased memory (forget, clear,
  // delete, archive, edit) must not stay readable in the file's bytes
  db.pragma('secure_delete = ON');
  if (path !== ':memory:') db.pragma(`mmap_size = ${MMAP_BYTES}`);
  // the text index's triggers call it (owned-text.ts), migration 21's fill too
  registerOwnedText(db);
  migrate(db);
  return db;
}

/** how long opening a file retries its switch to WAL while other processes switch it too: the busy timeout's */
const WAL_SWITCH_WAIT_MS = 10_000;

/**
 * Puts the file in WAL mode. Processes that open a new file at once (a fleet of workers started
 * together) each read it in rollback mode, then want its exclusive lock to switch: SQLite sees the
 * deadlock and answers one of them SQLITE_BUSY at once, without the busy timeout's wait. That one
 * waits a little and tries again; by then the file is in WAL mode, or its holder has let go.
 */
export function switchToWal(db: Pick<Db, 'pragma'>, deadline = Date.now() + WAL_SWITCH_WAIT_MS): void {
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      // synchronous, as the open is: nothing else of this process may use the connection meanwhile
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
    }
  }
}

/**
 * Runs `fn` in a transaction of its own, or inside the caller's when one is open — without the
 * SAVEPOINT a nested better-sqlite3 transaction opens: on each savepoint FTS5 writes the rows it holds
 * pending into a segment of their own, so the transaction batcher's commits (entries beside marks and
 * vectors) would leave many small segments to merge. A throw still undoes the whole outer transaction.
 */
export function atomically<T>(db: Db, fn: () => T, mode: 'deferred' | 'immediate' = 'immediate'): T {
  return db.inTransaction ? fn() : db.transaction(fn)[mode]();
}

export function migrate(db: Db): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    // IMMEDIATE: two processes opening a fresh file at once must not both run a migration.
    db.transaction(() => {
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now >= m.version) return;
      db.exec(m.sql);
      m.fill?.(db);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return db.pragma('user_version', { simple: true }) as number;
}
