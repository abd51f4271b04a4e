import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { migrate, LATEST_VERSION, MIGRATIONS } from '../../../src/adapters/postgres/migrations.js';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { createTestDatabase } from '../../helpers/postgres.js';

const MIGRATOR = fileURLToPath(new URL('./migrate-once.ts', import.meta.url));

/** Runs `migrate` in a process of its own; resolves with the versions that process applied. */
function migrateInProcess(url: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MIGRATOR, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`migrator exited ${code}: ${err}`))));
  });
}

describe('PostgreSQL migrations (real database)', () => {
  test('six processes starting at the same moment run each migration exactly once', async () => {
    const db = await createTestDatabase();
    const results = await Promise.all(Array.from({ length: 6 }, () => migrateInProcess(db.url)));
    const applied = results.flat().sort((a, b) => a - b);
    // a migration run twice would also fail on its own (CREATE TABLE of an existing table)
    assert.deepEqual(applied, MIGRATIONS.map((m) => m.version));
    const pg = new Postgres({ url: db.url, max: 1 });
    try {
      const rows = await pg.query<{ version: number; n: number }>('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version');
      assert.deepEqual(rows, MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
      assert.deepEqual(await migrate(pg), [], 'a later start applies nothing');
    } finally {
      await pg.close();
    }
  });

  test('a database written by a newer build is refused, not written', async () => {
    const db = await createTestDatabase();
    const pg = new Postgres({ url: db.url, max: 1 });
    try {
      await migrate(pg);
      await pg.run("INSERT INTO schema_migrations (version, name, pid) VALUES ($1, 'from the future', 0)", [LATEST_VERSION + 1]);
      await assert.rejects(migrate(pg), new RegExp(`schema version ${LATEST_VERSION + 1} is newer than this build's ${LATEST_VERSION}`));
    } finally {
      await pg.close();
    }
  });

  test('a failing migration is rolled back whole and named', async () => {
    const db = await createTestDatabase();
    const pg = new Postgres({ url: db.url, max: 1 });
    try {
      const broken = [...MIGRATIONS, { version: LATEST_VERSION + 1, name: 'half', sql: 'CREATE TABLE half (x int); SELECT no_such_function();' }];
      await assert.rejects(migrate(pg, broken), new RegExp(`migration ${LATEST_VERSION + 1} \\(half\\) failed`));
      const [t] = await pg.query<{ t: string | null }>("SELECT to_regclass('half')::text AS t");
      assert.equal(t!.t, null, 'nothing of the failed migration is left');
      const [v] = await pg.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations');
      assert.equal(v!.v, LATEST_VERSION);
    } finally {
      await pg.close();
    }
  });
});
