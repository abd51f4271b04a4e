import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { COMMON_TERM_DOCS } from '../../../../src/retrieval/query-terms.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A big user's search with more matches than it scores takes its newest matches meeting the filter.
 * What it reads is counted at the statements (better-sqlite3 exposes no per-statement row counts): the
 * rows each word's statement returns, and the runs of the statement that tests matches' records again
 * for their conditions.
 */
describe('a big user\'s filtered text search', () => {
  const user = 'big';
  const total = COMMON_TERM_DOCS + 1000;
  let db: Db;
  let store: SqliteLongTermStore;
  const counts = { wordRows: 0, conditionReads: 0 };

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
    new SqliteLongTermStore(db, undefined, { textSearchThread: false }).upsertSync(entries);
    const prepare = db.prepare.bind(db);
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      const all = st.all.bind(st);
      if (sql.includes('@floor')) {
        st.all = ((...args: unknown[]) => {
          const rows = all(...(args as [])) as unknown[];
          counts.wordRows += rows.length;
          return rows;
        }) as typeof st.all;
      } else if (/^SELECT z\.rowid FROM entry_sizes z WHERE z\.rowid IN \(SELECT value FROM json_each\(@rows\)\)/.test(sql)) {
        st.all = ((...args: unknown[]) => (counts.conditionReads++, all(...(args as [])))) as typeof st.all;
      }
      return st;
    }) as typeof db.prepare;
    store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
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

  it('reads no row again for its conditions: the newest matches meeting them are the rows scored', async () => {
    counts.conditionReads = 0;
    const hits = await store.searchText(user, 'ferry', { limit: 5, where: { metadata: { part: 1 }, roles: ['assistant'] } });
    assert.deepEqual(hits.map((h) => h.entry.id), ['e2997', 'e2993', 'e2989', 'e2985', 'e2981']);
    assert.equal(counts.conditionReads, 0);
  });
});
