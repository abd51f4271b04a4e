import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUnavailable, Postgres, redactUrl } from '../../../../src/adapters/postgres/pool.js';
import { BackendUnavailableError } from '../../../../src/errors.js';
import { toHttpError } from '../../../../src/api/errors.js';
import { freePort } from '../../../helpers/redis.js';

describe('PostgreSQL pool', () => {
  it('masks the password of a database URL, and only the password', () => {
    assert.equal(redactUrl('postgres://alice:s3cret@db.example:5433/memory?sslmode=require'), 'postgres://alice:***@db.example:5433/memory?sslmode=require');
    assert.equal(redactUrl('postgres://alice@db/memory'), 'postgres://alice@db/memory');
    assert.equal(redactUrl('not a url'), '(an unparsable database URL)');
  });

  it('tells "the database is not there" from a bad statement', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', '08006', '08001', '57P01', '57P03', '53300']) assert.ok(isUnavailable({ code, message: 'x' }), code);
    assert.ok(isUnavailable(new Error('Connection terminated unexpectedly')));
    assert.ok(isUnavailable(new Error('timeout exceeded when trying to connect')));
    for (const code of ['23505', '42P01', '22P02', '57014']) assert.ok(!isUnavailable({ code, message: 'x' }), code);
  });

  it('a database that does not answer is a 503 backend_unavailable naming the URL without its password', async () => {
    const port = await freePort();
    const pg = new Postgres({ url: `postgres://alice:s3cret@127.0.0.1:${port}/memory`, connectTimeoutMs: 500, max: 1 });
    try {
      const err = await pg.query('SELECT 1').then(
        () => assert.fail('no database listens there'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof BackendUnavailableError, String(err));
      assert.match(err.message, new RegExp(`postgres://alice:\\*\\*\\*@127\\.0\\.0\\.1:${port}/memory`));
      assert.doesNotMatch(err.message, /s3cret/);
      const http = toHttpError(err);
      assert.equal(http.status, 503);
      assert.equal(http.body.error.code, 'backend_unavailable');
      await assert.rejects(pg.tx(async () => 1), BackendUnavailableError);
    } finally {
      await pg.close();
    }
  });
});
