// Where one eval run keeps the service's durable store: a temp SQLite file (the default), or — with
// `--database-url URL` / NEURALCLEAVE_DATABASE_URL — a database of the run's own on that PostgreSQL
// server, created with a unique name (nc_eval_<pid>_<random>; the URL's user needs CREATEDB) and
// dropped afterwards. The URL's own database is only connected to for the CREATE and the DROP: the
// eval never writes to it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { redactUrl } from '../src/adapters/postgres/pool.js';
import { createDatabase } from '../test/helpers/postgres.js';

export interface EvalStore {
  /** "SQLite" or "PostgreSQL at <url without password>" */
  label: string;
  /** the config keys that select it */
  config: Record<string, unknown>;
  /** drops the scratch database; fails when a PostgreSQL run wrote an SQLite file after all */
  close(): Promise<void>;
}

/** A `--database-url` value: a postgres:// (or postgresql://) URL, else a clear error. */
export function databaseUrlArg(value: string | undefined, from: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${from} takes a postgres://user@host:5432/database URL, got "${redactUrl(value)}"`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error(`${from} takes a postgres:// URL, got a ${url.protocol} one`);
  return value;
}

/** The store of one run, its files (if any) in `dir`. */
export async function evalStore(dir: string, name: string, databaseUrl?: string): Promise<EvalStore> {
  const sqlitePath = join(dir, `${name}.db`);
  if (!databaseUrl) return { label: 'SQLite', config: { sqlite_path: sqlitePath }, close: async () => {} };
  const url = new URL(databaseUrl);
  // the database named in the URL (postgres when none) is where CREATE DATABASE runs
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/postgres';
  const db = await createDatabase('nc_eval', url.toString());
  return {
    label: `PostgreSQL at ${redactUrl(db.url)}`,
    // sqlite_path still points into the run's folder: a file there means the PostgreSQL run was not one
    // a busy machine must not turn a wait for a pooled connection (64 jobs in flight share the pool)
    // into a failed write, as the raised tier budgets keep it from skipping a tier
    config: { database_url: db.url, sqlite_path: sqlitePath, database_connect_timeout_ms: 60_000 },
    close: async () => {
      await db.drop();
      if (existsSync(sqlitePath)) throw new Error(`the PostgreSQL run wrote an SQLite file (${sqlitePath}): the durable store was not PostgreSQL alone`);
    },
  };
}
