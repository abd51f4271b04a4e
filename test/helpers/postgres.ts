import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import pg from 'pg';

/** The PostgreSQL server the tests use: 127.0.0.1:5432, trust auth (override with NEURALCLEAVE_TEST_PG). */
export const TEST_PG_SERVER = process.env.NEURALCLEAVE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432';

export interface TestDatabase {
  name: string;
  /** a connection URL to the database */
  url: string;
  /** drops it (terminating its connections); also runs after the test file */
  drop(): Promise<void>;
}

async function admin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Creates a database with a unique name (`nc_test_<pid>_<random>`); the caller drops it. Never
 * touches any other database. `adminUrl`: the server, user and database to connect to while creating
 * and dropping it (the test server's `postgres` database by default); the new database's URL is the
 * same with its name.
 */
export async function createDatabase(prefix = 'nc_test', adminUrl = `${TEST_PG_SERVER}/postgres`): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop };
}

/** A database of its own for one test file, dropped when the file's tests end, whatever happened. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const db = await createDatabase();
  after(() => db.drop());
  return db;
}

/**
 * A migrated database of its own for one test file and a pool on it, created on first call and shared
 * by the file's tests (contract suites give each test its own users); closed and dropped after.
 */
export function sharedPostgres(): () => Promise<import('../../src/adapters/postgres/pool.js').Postgres> {
  let ready: Promise<import('../../src/adapters/postgres/pool.js').Postgres> | null = null;
  let db: TestDatabase | null = null;
  // registered now, at the file's top level: a hook registered inside the first test would run after it
  after(async () => {
    if (ready) await (await ready).close();
    await db?.drop();
  });
  return () =>
    (ready ??= (async () => {
      const [{ Postgres }, { migrate }, created] = await Promise.all([
        import('../../src/adapters/postgres/pool.js'),
        import('../../src/adapters/postgres/migrations.js'),
        createDatabase(),
      ]);
      db = created;
      const pg = new Postgres({ url: created.url, max: 4 });
      await migrate(pg);
      return pg;
    })());
}

/**
 * Opens stores on databases of their own: each call creates a database and opens the durable store
 * on it (migrated); every store is closed and every database dropped when the file's tests end.
 * Register at the file's top level.
 */
export function freshPostgresStores(): () => Promise<import('../../src/adapters/postgres/open.js').PostgresStore> {
  const opened: Array<{ store: import('../../src/adapters/postgres/open.js').PostgresStore; db: TestDatabase }> = [];
  after(async () => {
    for (const o of opened) {
      await o.store.close();
      await o.db.drop();
    }
  });
  return async () => {
    const [{ openPostgresStore }, { default: pino }] = await Promise.all([import('../../src/adapters/postgres/open.js'), import('pino')]);
    const db = await createDatabase();
    const store = await openPostgresStore(db.url, pino({ level: 'silent' }), { max: 3 });
    opened.push({ store, db });
    return store;
  };
}
