import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * The text search runs on the caller's thread, in one synchronous read: a tier budget cannot stop it
 * once started, so a caller that gave up before it starts must not start it at all.
 */
describe('long-term text search for a caller that gave up', () => {
  it('runs nothing once the signal aborted, and answers as usual before that', async () => {
    const db = openDatabase(join(tmpDir(), 'abandoned.db'));
    const store = new SqliteLongTermStore(db);
    const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
    store.upsertSync(Array.from({ length: 50 }, (_, i) => {
      const content = `parcel ${i % 3 ? 'locker' : 'harbour'} gate ${i}`;
      return { id: `e${i}`, user_id: 'u', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
    }));
    let ran = 0;
    const own = store.searchTextSync.bind(store);
    store.searchTextSync = (...args) => (ran++, own(...args));
    const live = new AbortController();
    assert.equal((await store.searchText('u', 'harbour', { limit: 8, signal: live.signal })).length, 8);
    assert.equal(ran, 1);
    const reason = new Error('budget spent');
    live.abort(reason);
    await assert.rejects(store.searchText('u', 'harbour', { limit: 8, signal: live.signal }), (err) => err === reason);
    assert.equal(ran, 1, 'no search ran for the caller that gave up');
    db.close();
  });
});
