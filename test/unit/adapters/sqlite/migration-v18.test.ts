import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { BEFORE_FILTERED_ATTRIBUTES } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

const entry = (user: string, session: string, i: number, content: string): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString();
  return {
    id: `e${i}`, user_id: user, session_id: session, role: i % 2 === 0 ? 'user' : 'assistant', name: null, kind: i % 3 === 0 ? 'summary' : 'turn', content,
    content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: i % 2 === 0 ? { part: i % 4, tag: 'trip' } : null, covers: null, created_at: at, updated_at: at,
  };
};

/** the rows of entry_sizes whose filtered attributes are not their entry's own (none while they are kept) */
const astray = (db: Db) =>
  db
    .prepare(
      `SELECT count(*) FROM entries e LEFT JOIN entry_sizes z ON z.rowid = e.rowid
       WHERE z.rowid IS NULL OR z.session_id IS NOT e.session_id OR z.role IS NOT e.role OR z.kind IS NOT e.kind OR z.created_at IS NOT e.created_at OR z.metadata IS NOT e.metadata`,
    )
    .pluck()
    .get() as number;

/** Migration 18: each entry's filtered attributes beside its length, for filtered text searches. */
describe('SQLite migration 18: filtered attributes beside each entry\'s length', () => {
  it('fills a file written before it, keeps them through writes, edits, moves and deletes, and filters as before', async () => {
    const path = join(tmpDir(), 'filtered-attributes.db');
    let db = openDatabase(path);
    let store = new SqliteLongTermStore(db);
    const texts = ['the ferry to Naxos', 'ferry tickets', 'a hotel near the port', 'lunch with Sam by the ferry', 'Naxos, once'];
    await store.upsert(['ann', 'bob'].flatMap((u, k) => texts.map((t, i) => entry(u, `s${i % 3}`, k * 10 + i, t))));
    const filters = [
      { metadata: { part: 0 } },
      { roles: ['assistant' as const] },
      { kinds: ['summary' as const] },
      { created_before: '2024-01-04T00:00:00Z' },
      { session_ids: ['s1'] },
    ];
    const search = async (s: SqliteLongTermStore) => Promise.all(filters.map(async (where) => (await s.searchText('ann', 'ferry Naxos hotel', { limit: 10, where })).map((h) => h.entry.id)));
    const before = await search(store);
    assert.ok(before.every((ids) => ids.length > 0), JSON.stringify(before));

    db.exec(`${BEFORE_FILTERED_ATTRIBUTES} PRAGMA user_version = 17`);
    assert.throws(() => db.prepare('SELECT metadata FROM entry_sizes').get(), /no such column/);
    db.close();
    db = openDatabase(path);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
      store = new SqliteLongTermStore(db);
      assert.equal(astray(db), 0, 'filled from the entries');
      assert.deepEqual(await search(store), before, 'the same filtered results');

      await store.update('ann', 'e2', { content: 'a much longer text about a hotel near the old port' });
      db.prepare("UPDATE entries SET metadata = '{\"part\":3}', role = 'assistant', session_id = 's7', created_at = '2025-01-01T00:00:00Z' WHERE id = 'e1'").run();
      await store.delete('bob', ['e10', 'e13']);
      await store.deleteWhere('ann', 's2');
      await store.upsert([entry('ann', 's9', 30, 'a new session about the ferry')]);
      assert.equal(astray(db), 0, 'kept by the triggers');
      const moved = await store.searchText('ann', 'ferry', { limit: 10, where: { session_ids: ['s7'], roles: ['assistant'], metadata: { part: 3 } } });
      assert.deepEqual(moved.map((h) => h.entry.id), ['e1']);
    } finally {
      db.close();
    }
  });
});
