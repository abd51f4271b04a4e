import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { ownedText, ownerPrefix } from '../../../../src/adapters/sqlite/owned-text.js';
import { BEFORE_OWNED_TEXT, BEFORE_OWNER_TOKEN } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

// ids that share every word, one that differs only in case, non-ASCII, wordless and 512-byte ones
const USERS = ['realmem-Sophie_Dubois~1', 'realmem-Sophie_Dubois~1~2', 'Sophie_Dubois-realmem-1', 'ANN', 'ann', '東京', '@@--@@', '😀'.repeat(128)];

const entry = (user: string, i: number, content: string): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
};

/** the index's rows holding `word` as `owner`'s word */
const matched = (db: Db, owner: string, word = 'harbour') => db.prepare('SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck().get(`"${ownedText(ownerPrefix(owner), word)}"`);

/** Migration 21: the text index holds each user's words apart, for new writes and for a file from before it. */
describe("SQLite migration 21: each user's words apart in the text index", () => {
  it("matches exactly each owner's rows, through edits and deletes, and fills the index of a file written before it", async () => {
    const path = join(tmpDir(), 'owned-text.db');
    let db = openDatabase(path);
    let store = new SqliteLongTermStore(db);
    // user k holds k + 1 rows, every row the same words: only the owner tells them apart
    const entries = USERS.flatMap((u, k) => Array.from({ length: k + 1 }, (_, j) => entry(u, k * 10 + j, `the harbour locker ${j}`)));
    await store.upsert(entries);
    const search = async (s: SqliteLongTermStore, u: string) => (await s.searchText(u, 'harbour locker', { limit: 20 })).map((h) => [h.entry.id, h.bm25]);
    const before = await Promise.all(USERS.map((u) => search(store, u)));
    USERS.forEach((u, k) => assert.equal(matched(db, u), k + 1, `${u}: its rows and no other's`));
    assert.equal(db.prepare('SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck().get('harbour'), 0, 'no word is held without its owner');
    assert.equal(new Set(USERS.map(ownerPrefix)).size, USERS.length, 'one prefix per id');

    // a file from before migration 21, and one from before migration 16
    for (const [rewind, version] of [[BEFORE_OWNED_TEXT, 20], [BEFORE_OWNER_TOKEN, 15]] as const) {
      db.exec(`${rewind} PRAGMA user_version = ${version}`);
      db.close();
      db = openDatabase(path);
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
      assert.equal(db.prepare("SELECT count(*) FROM pragma_table_xinfo('entries') WHERE name = 'owner_token'").pluck().get(), 0, 'the owner token is gone');
      db.exec("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')");
      store = new SqliteLongTermStore(db);
      USERS.forEach((u, k) => assert.equal(matched(db, u), k + 1, `${u} after migrating from version ${version}`));
      assert.deepEqual(await Promise.all(USERS.map((u) => search(store, u))), before, 'every user finds what it found before');
    }
    try {
      await store.update('ANN', 'e30', { content: 'a new text' });
      await store.delete('ann', ['e40']);
      assert.equal(matched(db, 'ANN'), 3, 'an edit takes the old words out');
      assert.equal(matched(db, 'ANN', 'new'), 1, 'and puts the new ones in, as the owner\'s');
      assert.equal(matched(db, 'ann'), 4, 'a delete takes the row out');
      // a deleted word leaves the index's pages too (secure-delete: the delete gives the index its words)
      const held = () => db.prepare('SELECT count(*) FROM entries_fts_data WHERE instr(block, ?) > 0').pluck().get('zqxwvmarkword') as number;
      await store.upsert([entry('ANN', 99, 'zqxwvmarkword kept')]);
      assert.equal(matched(db, 'ANN', 'zqxwvmarkword'), 1);
      assert.ok(held() > 0, "the index's pages hold the word");
      await store.delete('ANN', ['e99']);
      assert.equal(held(), 0, "no page of the index holds the deleted word");
      db.exec("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')");
    } finally {
      db.close();
    }
  });
});
