import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { contentHash } from '../../../../src/domain/hash.js';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { tmpDir } from '../../../helpers/tmp.js';

const WORDS = ['porto', 'harbour', 'violin', 'budget', 'nurse', 'garden', 'podcast', 'schedule', 'tram', 'lemon'];

function entry(i: number): MemoryEntry {
  const content = `entry ${i}: ${WORDS[i % WORDS.length]} and ${WORDS[(i * 3) % WORDS.length]} ${'with some more words '.repeat(i % 5)}`;
  const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  return { id: `e${i}`, user_id: i % 3 === 0 ? 'bob' : 'ann', session_id: `s${i % 4}`, role: i % 2 ? 'assistant' : 'user', name: null, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
}

const segments = (db: Database.Database) => db.prepare('SELECT count(DISTINCT segid) FROM entries_fts_idx').pluck().get() as number;

/**
 * The text index's merge (the daily archival run's last step): every commit writes an FTS5 segment
 * and a search reads each word from each of them. Merged, the index is one segment and every search
 * answers as before; the merge runs on a thread of its own, so the caller's event loop goes on.
 */
describe('SQLite text index merge', () => {
  it('leaves one segment, and every search answers as before', async () => {
    const path = join(tmpDir(), 'merge.db');
    const db = openDatabase(path);
    const store = new SqliteLongTermStore(db);
    for (let i = 0; i < 60; i++) await store.upsert([entry(i)]);
    await store.delete('ann', ['e1', 'e2']);
    const before = segments(db);
    assert.ok(before > 1, `one commit a segment, FTS5 merging a few at a time: ${before}`);
    const search = async () => Promise.all(['ann', 'bob'].flatMap((u) => WORDS.map((w) => store.searchText(u, `${w} budget`, { limit: 20 }))));
    const answers = await search();

    const merged = await store.mergeTextIndex();
    assert.equal(merged.parts_before, before);
    assert.equal(merged.parts_after, 1);
    assert.equal(segments(db), 1);
    assert.deepEqual(await search(), answers);
    assert.deepEqual(await store.mergeTextIndex().then((m) => [m.parts_before, m.parts_after]), [1, 1], 'a merged index is left as it is');
    db.close();
  });

  it('runs on its own thread and connection: the event loop goes on while it waits for a writer', async () => {
    const path = join(tmpDir(), 'merge-wait.db');
    const db = openDatabase(path);
    const store = new SqliteLongTermStore(db);
    for (let i = 0; i < 10; i++) await store.upsert([entry(i)]);
    // another connection of this thread holds the write lock: a merge on this thread would wait for it
    // (busy_timeout, 10 s) without ever letting it go, then fail with SQLITE_BUSY
    const writer = new Database(path);
    writer.exec('BEGIN IMMEDIATE');
    const merging = store.mergeTextIndex();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    await new Promise((r) => setTimeout(r, 200));
    clearInterval(timer);
    assert.ok(ticks > 0, 'the event loop ran while the merge waited');
    writer.exec('COMMIT');
    const merged = await merging;
    assert.equal(merged.parts_after, 1);
    assert.ok(merged.parts_before > 1);
    writer.close();
    db.close();
  });

  it('says which file it could not merge', async () => {
    const path = join(tmpDir(), 'merge-gone.db');
    const db = openDatabase(path);
    const store = new SqliteLongTermStore(db);
    db.exec('DROP TABLE entries_fts');
    await assert.rejects(store.mergeTextIndex(), (err: Error) => err.message.includes(path) && /entries_fts/.test(err.message));
    db.close();
  });
});
