import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { BEFORE_OWNER_TOKEN } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

const entry = (user: string, i: number, content: string, name: string | null = null): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: 's', role: 'user', name, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
};

/** text_stats as it must be: recomputed from entries */
const recomputed = (db: Db) =>
  db.prepare("SELECT user_id, count(*) AS docs, sum(octet_length(content) + octet_length(coalesce(name, ''))) AS bytes, sum(coalesce(name, '') != '') AS named FROM entries GROUP BY user_id ORDER BY user_id").all();
const kept = (db: Db) => db.prepare('SELECT user_id, docs, bytes, named FROM text_stats ORDER BY user_id').all();

/** Each user's entry count and length (BM25's statistics) follow every write, and a file from before them gets them. */
describe('SQLite text_stats', () => {
  it('follows inserts, edits and deletes, and leaves no row for a user with no entries', async () => {
    const db = openDatabase(join(tmpDir(), 'stats.db'));
    const store = new SqliteLongTermStore(db);
    await store.upsert([entry('ann', 1, 'café au lait ☕'), entry('ann', 2, 'tea', 'Ann'), entry('bob', 3, 'coffee')]);
    assert.deepEqual(kept(db), recomputed(db));
    assert.deepEqual(kept(db)[0], { user_id: 'ann', docs: 2, bytes: Buffer.byteLength('café au lait ☕') + 3 + 3, named: 1 });
    await store.update('ann', 'e2', { content: 'a much longer tea text' });
    assert.deepEqual(kept(db), recomputed(db));
    await store.delete('bob', ['e3']);
    assert.deepEqual(kept(db), recomputed(db));
    assert.deepEqual(kept(db).map((r) => (r as { user_id: string }).user_id), ['ann'], "bob's id is gone with his last entry");
    db.close();
  });

  it('is built for a file written before it (migration 9)', async () => {
    const path = join(tmpDir(), 'old.db');
    let db = openDatabase(path);
    await new SqliteLongTermStore(db).upsert([entry('ann', 1, 'one two'), entry('bob', 2, 'three', 'Bob'), entry('ann', 3, 'four')]);
    // the file as version 8 left it: no table, no triggers (and none of the later migrations' changes)
    db.exec(BEFORE_OWNER_TOKEN + 'DROP TRIGGER entries_stats_ai; DROP TRIGGER entries_stats_ad; DROP TRIGGER entries_stats_au; DROP TABLE text_stats; ALTER TABLE erasures DROP COLUMN action; DROP TRIGGER entry_repeats_ad; DROP TRIGGER entry_repeats_au; DROP TABLE entry_repeats; DROP INDEX vectors_filter; CREATE INDEX vectors_embedder_user ON vectors (embedder, user_id); DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_ad; DROP TRIGGER entry_sizes_au; DROP TABLE entry_sizes; PRAGMA user_version = 8');
    db.close();
    db = openDatabase(path);
    assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
    assert.deepEqual(kept(db), recomputed(db));
    assert.equal(kept(db).length, 2);
    const hits = await new SqliteLongTermStore(db).searchText('ann', 'four', { limit: 5 });
    assert.deepEqual(hits.map((h) => h.entry.id), ['e3']);
    db.close();
  });
});

/** entry_sizes as it must be: each entry's owner and length, recomputed from entries */
const sizesRecomputed = (db: Db) =>
  db.prepare("SELECT rowid, user_id, octet_length(content) + octet_length(coalesce(name, '')) AS bytes FROM entries ORDER BY rowid").all();
const sizesKept = (db: Db) => db.prepare('SELECT rowid, user_id, bytes FROM entry_sizes ORDER BY rowid').all();

/** Each entry's owner and length (what text search reads of a match) follow every write, and a file from before them gets them. */
describe('SQLite entry_sizes', () => {
  it('follows inserts, edits and deletes', async () => {
    const db = openDatabase(join(tmpDir(), 'sizes.db'));
    const store = new SqliteLongTermStore(db);
    await store.upsert([entry('ann', 1, 'café au lait ☕'), entry('ann', 2, 'tea', 'Ann'), entry('bob', 3, 'coffee')]);
    assert.deepEqual(sizesKept(db), sizesRecomputed(db));
    await store.update('ann', 'e2', { content: 'a much longer tea text' });
    await store.update('ann', 'e1', { pinned: true });
    assert.deepEqual(sizesKept(db), sizesRecomputed(db));
    await store.delete('bob', ['e3']);
    assert.deepEqual(sizesKept(db), sizesRecomputed(db));
    assert.equal(sizesKept(db).length, 2);
    db.close();
  });

  it('is built for a file written before it (migration 13), and search reads it', async () => {
    const path = join(tmpDir(), 'old-sizes.db');
    let db = openDatabase(path);
    await new SqliteLongTermStore(db).upsert([entry('ann', 1, 'one two'), entry('bob', 2, 'three four', 'Bob'), entry('ann', 3, 'four')]);
    db.exec(BEFORE_OWNER_TOKEN + 'DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_ad; DROP TRIGGER entry_sizes_au; DROP TABLE entry_sizes; DROP TRIGGER entries_stats_ai; DROP TRIGGER entries_stats_ad; DROP TRIGGER entries_stats_au; ALTER TABLE text_stats DROP COLUMN named; PRAGMA user_version = 12');
    db.close();
    db = openDatabase(path);
    assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
    assert.deepEqual(sizesKept(db), sizesRecomputed(db));
    const hits = await new SqliteLongTermStore(db).searchText('ann', 'four', { limit: 5 });
    assert.deepEqual(hits.map((h) => h.entry.id), ['e3'], "bob's row holding the word is not ann's");
    db.close();
  });
});
