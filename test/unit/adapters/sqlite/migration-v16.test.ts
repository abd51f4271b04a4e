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

// ids that share every word, one that differs only in case, non-ASCII, wordless and 512-byte ones
const USERS = ['realmem-Sophie_Dubois~1', 'realmem-Sophie_Dubois~1~2', 'Sophie_Dubois-realmem-1', 'ANN', 'ann', '東京', '@@--@@', '😀'.repeat(128)];

const entry = (user: string, i: number, content: string): MemoryEntry => {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: user, session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
};

const tokenOf = (user: string) => `owner_token : "${Buffer.from(user, 'utf8').toString('hex')}0"`;
const matched = (db: Db, user: string) => db.prepare('SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck().get(tokenOf(user));

/** Migration 16: the text index holds one token per owner, for new writes and for a file from before it. */
describe('SQLite migration 16: one token per owner in the text index', () => {
  it("matches exactly each owner's rows, through edits and deletes, and rebuilds a file written before it", async () => {
    const path = join(tmpDir(), 'owner-token.db');
    let db = openDatabase(path);
    let store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
    // user k holds k + 1 rows, every row the same words: only the owner tells them apart
    const entries = USERS.flatMap((u, k) => Array.from({ length: k + 1 }, (_, j) => entry(u, k * 10 + j, `the harbour locker ${j}`)));
    await store.upsert(entries);
    const search = async (s: SqliteLongTermStore, u: string) => (await s.searchText(u, 'harbour locker', { limit: 20 })).map((h) => [h.entry.id, h.bm25]);
    const before = await Promise.all(USERS.map((u) => search(store, u)));
    USERS.forEach((u, k) => assert.equal(matched(db, u), k + 1, `${u}: its rows and no other's`));

    db.exec(`${BEFORE_OWNER_TOKEN} PRAGMA user_version = 15`);
    assert.equal(db.prepare("SELECT count(*) FROM pragma_table_xinfo('entries') WHERE name = 'owner_token'").pluck().get(), 0);
    db.close();
    db = openDatabase(path);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
      db.exec("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')");
      store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
      USERS.forEach((u, k) => assert.equal(matched(db, u), k + 1, `${u} after the migration`));
      assert.deepEqual(await Promise.all(USERS.map((u) => search(store, u))), before, 'every user finds what it found before');

      await store.update('ANN', 'e30', { content: 'a new text' });
      await store.delete('ann', ['e40']);
      assert.equal(matched(db, 'ANN'), 4, 'an edit keeps the owner');
      assert.equal(matched(db, 'ann'), 4, 'a delete takes the row out');
      db.exec("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')");
    } finally {
      db.close();
    }
  });
});
