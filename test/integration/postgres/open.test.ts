import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPostgresStore } from '../../../src/adapters/postgres/open.js';
import { LATEST_VERSION } from '../../../src/adapters/postgres/migrations.js';
import { ConfigError } from '../../../src/errors.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { silentLogger } from '../../helpers/services.js';

describe('openPostgresStore (real database)', () => {
  it('a database that does not answer is a start-up error naming the URL without its password', async () => {
    const started = Date.now();
    await assert.rejects(
      openPostgresStore('postgres://nc:hunter2-secret@127.0.0.1:1/memory', silentLogger(), { connectTimeoutMs: 1000 }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, `a ConfigError, not ${(e as Error).name}`);
        assert.match(e.message, /PostgreSQL at postgres:\/\/nc:\*\*\*@127\.0\.0\.1:1\/memory \(database_url\) does not answer/);
        assert.match(e.message, /ECONNREFUSED/);
        assert.doesNotMatch(JSON.stringify({ m: e.message, d: e.details }), /hunter2/);
        assert.equal(e.details?.[0]?.path, 'database_url');
        return true;
      },
    );
    assert.ok(Date.now() - started < 5000, 'no retrying for ever');
  });

  it('a database that refuses the login is a start-up error too, the password not shown', async () => {
    const db = await createTestDatabase();
    const url = new URL(db.url);
    url.username = 'no_such_role_nc';
    url.password = 'hunter2-secret';
    await assert.rejects(openPostgresStore(url.toString(), silentLogger()), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /no_such_role_nc/);
      assert.doesNotMatch(e.message, /hunter2/);
      return true;
    });
  });

  it('opens, migrates to the latest version, and every part of the store works on the one pool', async () => {
    const db = await createTestDatabase();
    const store = await openPostgresStore(db.url, silentLogger(), { max: 2 });
    try {
      assert.equal(store.kind, 'postgres');
      const [v] = await store.pg.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations');
      assert.equal(v!.v, LATEST_VERSION);
      const [s] = await store.pg.query<{ statement_timeout: string }>('SHOW statement_timeout');
      assert.equal(s!.statement_timeout, '30s', 'the default statement timeout');
      await store.turnLog.append([
        { id: 't1', user_id: 'ann', session_id: 's', role: 'user', name: null, content: 'hello', content_hash: 'h', created_at: '2026-01-01T00:00:00.000Z', importance: null, pinned: false, metadata: null },
      ]);
      assert.equal((await store.turnLog.counts()).total, 1);
      assert.equal(await store.vectorRows.count(), 0);
      assert.deepEqual(await store.archives.lastRuns(), []);
    } finally {
      await store.close();
    }
    // a second open of a migrated database applies nothing and sees the data
    const again = await openPostgresStore(db.url, silentLogger(), { max: 1, statementTimeoutMs: 1500 });
    try {
      assert.equal((await again.turnLog.get('ann', 't1'))?.content, 'hello');
      const [s] = await again.pg.query<{ statement_timeout: string }>('SHOW statement_timeout');
      assert.equal(s!.statement_timeout, '1500ms');
      await assert.rejects(again.pg.query('SELECT pg_sleep(3)'), /statement timeout/);
    } finally {
      await again.close();
    }
  });
});
