import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { BEFORE_SESSION_SIZES } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

const entry = (user: string, session: string, i: number, content: string, name: string | null = null): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: session, role: 'user', name, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
};

/** session_sizes and session_counts as the entries give them, and as the triggers keep them */
const sizes = (db: Db) => ({
  kept: [
    db.prepare('SELECT user_id, session_id, docs, bytes FROM session_sizes ORDER BY user_id, session_id').raw().all(),
    db.prepare('SELECT user_id, sessions FROM session_counts ORDER BY user_id').raw().all(),
  ],
  counted: [
    db.prepare("SELECT user_id, session_id, count(*), sum(octet_length(content) + octet_length(coalesce(name, ''))) FROM entries GROUP BY user_id, session_id ORDER BY user_id, session_id").raw().all(),
    db.prepare('SELECT user_id, count(DISTINCT session_id) FROM entries GROUP BY user_id ORDER BY user_id').raw().all(),
  ],
});
/** entries whose size record does not name their own session */
const unsessioned = (db: Db) =>
  db.prepare('SELECT count(*) FROM entries e JOIN entry_sizes z ON z.rowid = e.rowid LEFT JOIN session_sizes s ON s.id = z.session WHERE s.user_id IS NOT e.user_id OR s.session_id IS NOT e.session_id').pluck().get();

/** Migration 17: each session's length and each entry's session, for scoring a message's sessions. */
describe('SQLite migration 17: session sizes', () => {
  it('keeps every session of every user sized through writes, edits and deletes, and fills a file written before it', async () => {
    const path = join(tmpDir(), 'session-sizes.db');
    let db = openDatabase(path);
    let store = new SqliteLongTermStore(db);
    const texts = ['the ferry to Naxos', 'ferry tickets', 'a hotel near the port', 'lunch with Sam', 'Naxos, once'];
    await store.upsert(['ann', 'bob'].flatMap((u, k) => texts.map((t, i) => entry(u, `s${i % 3}`, k * 10 + i, t, i === 1 ? 'Ann' : null))));
    const search = async (s: SqliteLongTermStore) => (await s.searchText('ann', 'Naxos ferry hotel', { limit: 10, bySession: true })).map((h) => [h.entry.id, h.bm25, h.session_bm25]);
    const before = await search(store);
    assert.ok(before.every(([, , session]) => typeof session === 'number' && session > 0));

    db.exec(`${BEFORE_SESSION_SIZES} PRAGMA user_version = 16`);
    db.close();
    db = openDatabase(path);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
      store = new SqliteLongTermStore(db);
      let { kept, counted } = sizes(db);
      assert.equal(kept[0]!.length, 6);
      assert.deepEqual(kept, counted, 'filled from the entries');
      assert.equal(unsessioned(db), 0);
      assert.deepEqual(await search(store), before, 'the same session scores');

      await store.update('ann', 'e2', { content: 'a much longer text about a hotel near the old port' });
      await store.delete('bob', ['e10', 'e13']);
      await store.deleteWhere('ann', 's2');
      await store.upsert([entry('ann', 's9', 30, 'a new session')]);
      ({ kept, counted } = sizes(db));
      assert.deepEqual(kept, counted, 'kept by the triggers');
      assert.equal(unsessioned(db), 0);
    } finally {
      db.close();
    }
  });
});
