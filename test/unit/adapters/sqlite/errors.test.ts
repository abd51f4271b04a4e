import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { mappingErrors } from '../../../../src/adapters/sqlite/errors.js';
import { openSqliteStore } from '../../../../src/adapters/sqlite/open.js';
import { toHttpError } from '../../../../src/api/errors.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { BackendBusyError, NeuralCleaveError } from '../../../../src/errors.js';
import { tmpDir } from '../../../helpers/tmp.js';

const turn = (id: string) => ({
  id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, content: `text ${id}`, content_hash: contentHash(`text ${id}`),
  created_at: new Date().toISOString(), importance: null, pinned: false, metadata: null,
});

describe('SQLite driver errors leave the store as the error catalog\'s', () => {
  test('a file locked by another process past the busy timeout: BackendBusyError, answered 503 with Retry-After', async () => {
    const path = join(tmpDir(), 'busy.db');
    const store = await openSqliteStore(path);
    store.db.pragma('busy_timeout = 50');
    const other = new Database(path);
    other.prepare('BEGIN IMMEDIATE').run();
    try {
      const err = await store.turnLog.append([turn('t1')]).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof BackendBusyError, `got ${String(err)}`);
      const mapped = toHttpError(err);
      assert.equal(mapped.status, 503);
      assert.equal(mapped.body.error.code, 'backend_unavailable');
      assert.equal(mapped.headers?.['Retry-After'], '1');
      // a synchronous throw and a page of an async iterator are mapped as well
      await assert.rejects(store.erasure.eraseRows({ kind: 'user', userId: 'ann' }), BackendBusyError);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    assert.equal((await store.turnLog.append([turn('t2')])).accepted.length, 1, 'once the lock is gone the write goes through');
    await store.close();
  });

  test('a key held already: content_conflict (409); other errors pass unchanged', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY)');
    const part = mappingErrors({
      insert: (id: string) => db.prepare('INSERT INTO t (id) VALUES (?)').run(id),
      async *pages() {
        yield [1];
        db.prepare('INSERT INTO t (id) VALUES (?)').run('a');
      },
      broken: async () => {
        throw new TypeError('a bug');
      },
    });
    part.insert('a');
    assert.throws(() => part.insert('a'), (e: unknown) => e instanceof NeuralCleaveError && e.code === 'content_conflict' && toHttpError(e).status === 409);
    await assert.rejects(async () => {
      for await (const _ of part.pages()) void _;
    }, (e: unknown) => e instanceof NeuralCleaveError && e.code === 'content_conflict');
    await assert.rejects(part.broken(), TypeError);
    db.close();
  });
});
