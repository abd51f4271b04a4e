import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import type { RecordFilter } from '../../../../src/domain/filters.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { COMMON_TERM_DOCS } from '../../../../src/retrieval/query-terms.js';
import { watchPhraseReads } from '../../../helpers/phrase-reads.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A big user's search with more matches than it scores takes its newest matches meeting the filter.
 * What it reads is counted at the statements (better-sqlite3 exposes no per-statement row counts): the
 * rowids each word's statement returns, and the rows whose attributes are read for the conditions.
 */
describe('a big user\'s filtered text search', () => {
  const user = 'big';
  const total = COMMON_TERM_DOCS + 1000;
  let db: Db;
  let store: SqliteLongTermStore;
  const counts = { wordRows: 0, attributeRows: 0 };

  before(() => {
    db = openDatabase(join(tmpDir(), 'newest.db'));
    const entries: MemoryEntry[] = [];
    // every entry holds the word: a big user's query with more matches than it scores
    for (let i = 0; i < total; i++) {
      const session = i < 20 ? 'first-week' : `s${Math.floor(i / 20)}`;
      const content = `the ferry timetable changed again, note ${i}`;
      const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      entries.push({
        id: `e${i}`, user_id: user, session_id: session, role: i % 2 === 0 ? 'user' : 'assistant', name: null, kind: 'turn', content, content_hash: contentHash(content),
        importance: 0.5, pinned: false, metadata: { part: i % 4 }, covers: null, created_at: at, updated_at: at,
      });
    }
    new SqliteLongTermStore(db).upsertSync(entries);
    watchPhraseReads(db, (_, rowids) => (counts.wordRows += rowids));
    const prepare = db.prepare.bind(db);
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      if (!/^SELECT z\.rowid, z\.session_id, z\.role, z\.kind, z\.created_at, z\.metadata FROM json_each\(@rows\)/.test(sql)) return st;
      const all = st.all.bind(st);
      st.all = ((...args: unknown[]) => {
        const rows = all(...(args as [])) as unknown[];
        counts.attributeRows += rows.length;
        return rows;
      }) as typeof st.all;
      return st;
    }) as typeof db.prepare;
    store = new SqliteLongTermStore(db);
  });
  after(() => db.close());

  it('within named sessions, reads the matches of their stretch of the index, not the whole history\'s', async () => {
    counts.wordRows = 0;
    const hits = await store.searchText(user, 'ferry', { limit: 5, where: { session_ids: ['first-week'] } });
    assert.equal(hits.length, 5);
    assert.ok(hits.every((h) => h.entry.session_id === 'first-week'), JSON.stringify(hits.map((h) => h.entry.id)));
    assert.ok(counts.wordRows > 0 && counts.wordRows <= 20, `rows read: ${counts.wordRows} (the sessions hold 20 of ${total} matches)`);
    assert.deepEqual(await store.searchText(user, 'ferry', { limit: 5, where: { session_ids: ['never-held'] } }), []);
  });

  it('reads a word\'s matches from the newest down, about as many as it scores, and keeps them', async () => {
    counts.wordRows = 0;
    const search = () => store.searchText(user, 'timetable', { limit: 5 });
    const newest = ['e2999', 'e2998', 'e2997', 'e2996', 'e2995'];
    assert.deepEqual((await search()).map((h) => h.entry.id), newest);
    // the newest 500 matches are scored: the word's newest 64, then as many again until they hold them
    assert.ok(counts.wordRows >= 500 && counts.wordRows <= 1_024, `rows read: ${counts.wordRows} of ${total} matches`);
    counts.wordRows = 0;
    assert.deepEqual((await search()).map((h) => h.entry.id), newest);
    assert.equal(counts.wordRows, 0, 'kept: none read again');
  });

  it('tests the newest matches for its conditions on what the connection keeps, reading each match\'s attributes once', async () => {
    counts.attributeRows = 0;
    const search = () => store.searchText(user, 'ferry', { limit: 5, where: { metadata: { part: 1 }, roles: ['assistant'] } });
    const newest = ['e2997', 'e2993', 'e2989', 'e2985', 'e2981'];
    assert.deepEqual((await search()).map((h) => h.entry.id), newest);
    // a quarter of the matches meet the conditions: the 500 scored lie among the newest ~2,000
    assert.ok(counts.attributeRows >= 1_500 && counts.attributeRows <= 2_600, `attributes read: ${counts.attributeRows}`);
    counts.attributeRows = 0;
    assert.deepEqual((await search()).map((h) => h.entry.id), newest);
    assert.equal(counts.attributeRows, 0, 'kept: none read again');
  });
});

describe("a big user's newest matches beside another user's newer ones", () => {
  it('walks past the other user\'s rows, plain and filtered, finding what the newest of its own are', async () => {
    const db = openDatabase(join(tmpDir(), 'newest-shared.db'));
    try {
      const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      const entry = (user: string, i: number): MemoryEntry => {
        const content = `the ferry timetable changed again, ${user} ${i}`;
        return {
          id: `${user}${i}`, user_id: user, session_id: `${user}-s`, role: i % 2 === 0 ? 'user' : 'assistant', name: null, kind: 'turn', content, content_hash: contentHash(content),
          importance: 0.5, pinned: false, metadata: { part: i % 4 }, covers: null, created_at: at(i), updated_at: at(i),
        };
      };
      const store = new SqliteLongTermStore(db);
      // the big user holds most of the index (no owner clause), and the other's rows are the newest rowids
      store.upsertSync(Array.from({ length: COMMON_TERM_DOCS + 1000 }, (_, i) => entry('big', i)));
      store.upsertSync(Array.from({ length: 800 }, (_, i) => entry('other', i)));
      const ids = async (where?: RecordFilter) => (await store.searchText('big', 'ferry', { limit: 3, ...(where ? { where } : {}) })).map((h) => h.entry.id);
      assert.deepEqual(await ids(), ['big2999', 'big2998', 'big2997']);
      assert.deepEqual(await ids({ metadata: { part: 2 } }), ['big2998', 'big2994', 'big2990']);
      assert.deepEqual(await ids({ created_after: at(2000), created_before: at(2100) }), ['big2099', 'big2098', 'big2097']);
    } finally {
      db.close();
    }
  });
});

describe("a big user's newest matches scored with each long row's recorded repeats", () => {
  it('counts a long row that an earlier search left below its floor as a fresh connection does', async () => {
    const path = join(tmpDir(), 'newest-repeats.db');
    const db = openDatabase(path);
    const fresh = openDatabase(path);
    try {
      const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      const long = 2200;
      const entries = Array.from({ length: COMMON_TERM_DOCS + 1000 }, (_, i): MemoryEntry => {
        // one long reply names the ferry five times among 150 other words
        const content = i === long ? `${'ferry '.repeat(5)}${Array.from({ length: 150 }, (_, w) => `word${w}`).join(' ')}` : `the ferry timetable changed again, note ${i}`;
        return {
          id: `e${i}`, user_id: 'big', session_id: `s${Math.floor(i / 20)}`, role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(content),
          importance: 0.5, pinned: false, metadata: { part: i % 4 }, covers: null, created_at: at(i), updated_at: at(i),
        };
      });
      const store = new SqliteLongTermStore(db);
      store.upsertSync(entries);
      const scoreOf = async (s: SqliteLongTermStore) => (await s.searchText('big', 'ferry', { limit: 600, where: { metadata: { part: 0 } } })).find((h) => h.entry.id === `e${long}`)?.bm25;
      // the plain search scores the newest 500 matches: the long reply lies below them
      const plain = await store.searchText('big', 'ferry', { limit: 600 });
      assert.ok(!plain.some((h) => h.entry.id === `e${long}`));
      const kept = await scoreOf(store);
      const once = await scoreOf(new SqliteLongTermStore(fresh));
      assert.ok(once !== undefined && kept !== undefined, 'the filtered search scores the long reply');
      assert.equal(kept, once);
    } finally {
      db.close();
      fresh.close();
    }
  });
});
