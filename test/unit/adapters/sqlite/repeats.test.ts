import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { SqliteArchiveStore } from '../../../../src/adapters/sqlite/archive-store.js';
import { SqliteMaintenanceStore } from '../../../../src/adapters/sqlite/maintenance.js';
import { countAfter, LONG_ROW_TOKENS, repeatKey, repeatPattern, repeatsOf } from '../../../../src/adapters/sqlite/repeats.js';
import { BEFORE_OWNER_TOKEN } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

/** a word's recorded count in a record, as the text search finds it */
const countOf = (record: string | null, key: string) => countAfter(record, repeatPattern(key));
const FILLER = Array.from({ length: LONG_ROW_TOKENS }, (_, i) => `word${i}`).join(' ');
const entry = (user: string, i: number, content: string, name: string | null = null): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: 's', role: 'assistant', name, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
};

/** every record, as the entry it belongs to: [id, record] */
const records = (db: Db) =>
  db.prepare('SELECT e.id, r.repeats FROM entry_repeats r LEFT JOIN entries e ON e.rowid = r.rowid ORDER BY e.id').raw().all() as Array<[string | null, string]>;

/** A long entry's repeated words are kept beside it while its text is what they were counted from, and never after. */
describe('SQLite entry_repeats', () => {
  it('counts the words a long entry holds more than once, by their stem, a name word twice', () => {
    assert.equal(repeatsOf('ferry ferry lisbon', null), null, 'a short entry has no record');
    const r = repeatsOf(`Ferries ferry the FERRY harbour ${FILLER}`, 'Harbour');
    assert.equal(countOf(r, 'ferry'), 3);
    assert.equal(countOf(r, 'harbour'), 3, 'once in the content, once in the name (twice)');
    assert.equal(countOf(r, 'word7'), null, 'a word held once is not recorded');
    assert.equal(countOf(null, 'ferry'), null);
    const many = repeatsOf(`${'ferry '.repeat(137)}harbour harbour`, null);
    assert.equal(countOf(many, 'ferry'), 137, 'a count of several digits');
    assert.equal(countOf(many, 'harbour'), 2, 'the last record');
    assert.equal(countOf(' ferry:12 ferryman:5 ', 'ferryman'), 5, 'a word that ends another is not it');
    assert.equal(repeatsOf(FILLER, null), null, 'a long entry that repeats nothing has no record');
  });

  it('follows inserts, edits, realignment, archiving and deletes', async () => {
    const db = openDatabase(join(tmpDir(), 'repeats.db'));
    try {
      const store = new SqliteLongTermStore(db);
      await store.upsert([entry('ann', 1, `zebracorn zebracorn parade ${FILLER}`), entry('ann', 2, 'zebracorn zebracorn, short'), entry('bob', 3, `ferry ferry ${FILLER}`)]);
      assert.deepEqual(records(db), [['e1', ' zebracorn:2 '], ['e3', ' ferry:2 ']], 'long entries only');
      // an edit: the old text's words go with it
      await store.update('ann', 'e1', { content: `lantern lantern lantern ${FILLER}` });
      assert.deepEqual(records(db), [['e1', ' lantern:3 '], ['e3', ' ferry:2 ']]);
      await store.update('ann', 'e1', { pinned: true });
      assert.deepEqual(records(db), [['e1', ' lantern:3 '], ['e3', ' ferry:2 ']], 'an update of other fields keeps the record');
      await store.update('ann', 'e1', { content: 'now short' });
      assert.deepEqual(records(db), [['e3', ' ferry:2 ']]);
      await store.delete('bob', ['e3']);
      assert.deepEqual(records(db), [], "a deleted entry's record goes with it");

      // a kind-turn entry realigned to its turn's text (doctor --repair) is counted from that text
      const text = `harbour harbour ${FILLER}`;
      db.prepare("INSERT INTO turns (id, user_id, session_id, role, name, content, content_hash, created_at, accepted_at) VALUES ('e1', 'ann', 's', 'assistant', NULL, ?, ?, ?, 0)").run(text, contentHash(text), entry('ann', 1, '').created_at);
      await new SqliteMaintenanceStore(db, ':memory:').realign('ann', 'e1');
      assert.deepEqual(records(db), [['e1', ' harbour:2 ']]);

      // an archived session's summary entry, written by the archive store
      const archives = new SqliteArchiveStore(db);
      const contents = await archives.contents({ user_id: 'ann', session_id: 's', last_at: entry('ann', 9, '').created_at }, 'arch');
      const summary: MemoryEntry = { ...entry('ann', 9, `archive archive ${FILLER}`), id: 'arch', kind: 'archive', role: 'system', covers: ['e1'] };
      assert.ok(await archives.replace(contents, summary, '2100-01-01T00:00:00.000Z'));
      assert.ok(records(db).some(([id, r]) => id === 'arch' && countOf(r, repeatKey('archive')) === 2), JSON.stringify(records(db)));
    } finally {
      db.close();
    }
  });

  it('is filled for a file written before it (migration 11), and searches count those frequencies', async () => {
    const path = join(tmpDir(), 'old-repeats.db');
    let db = openDatabase(path);
    const ids = (hits: Array<{ entry: { id: string } }>) => hits.map((h) => h.entry.id);
    const entries = [entry('ann', 1, `otter otter otter ${FILLER}`), entry('ann', 2, `one otter ${FILLER}`), entry('ann', 3, 'a short note')];
    await new SqliteLongTermStore(db).upsert(entries);
    const want = ids(await new SqliteLongTermStore(db).searchText('ann', 'otter', { limit: 5 }));
    assert.deepEqual(want, ['e1', 'e2'], 'more hits of the word first, though its text is longer');
    db.exec(BEFORE_OWNER_TOKEN + 'DROP TRIGGER entry_repeats_ad; DROP TRIGGER entry_repeats_au; DROP TABLE entry_repeats; DROP INDEX vectors_filter; CREATE INDEX vectors_embedder_user ON vectors (embedder, user_id); DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_ad; DROP TRIGGER entry_sizes_au; DROP TABLE entry_sizes; DROP TRIGGER entries_stats_ai; DROP TRIGGER entries_stats_ad; DROP TRIGGER entries_stats_au; ALTER TABLE text_stats DROP COLUMN named; PRAGMA user_version = 10');
    db.close();
    db = openDatabase(path);
    try {
      assert.deepEqual(records(db), [['e1', ' otter:3 ']]);
      assert.deepEqual(ids(await new SqliteLongTermStore(db).searchText('ann', 'otter', { limit: 5 })), want);
    } finally {
      db.close();
    }
  });
});
