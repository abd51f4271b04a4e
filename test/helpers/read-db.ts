import Database from 'better-sqlite3';

/** Reads a service's SQLite file from the test, read-only, while its processes may be writing it. */
export function readDb<T>(dbPath: string, fn: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
