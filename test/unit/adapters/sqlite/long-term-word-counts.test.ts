import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { COMMON_TERM_DOCS } from '../../../../src/retrieval/query-terms.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A big user's word counts (its document frequencies, counted before the search) read each matched
 * row's owner only while the index holds another user's rows. What they read is counted at the
 * statements: the counting statements run, and whether each joined the rows' owners.
 */
describe('a big user\'s word counts', () => {
  const user = 'big';
  let db: Db;
  let store: SqliteLongTermStore;
  const counts = { joined: 0, bare: 0 };

  before(() => {
    db = openDatabase(join(tmpDir(), 'word-counts.db'));
    const entries: MemoryEntry[] = [];
    for (let i = 0; i < COMMON_TERM_DOCS + 200; i++) {
      entries.push(entry(user, i, i % 10 === 0 ? `the ferry timetable changed again, note ${i}` : i % 3 === 0 ? `a walk by the harbour, note ${i}` : `lunch with Ana, note ${i}`));
    }
    new SqliteLongTermStore(db).upsertSync(entries);
    const prepare = db.prepare.bind(db);
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      if (!/^SELECT count\(\*\) FROM \(SELECT 1 FROM entries_fts/.test(sql)) return st;
      const get = st.get.bind(st);
      st.get = ((...args: unknown[]) => {
        if (sql.includes('entry_sizes')) counts.joined++;
        else counts.bare++;
        return get(...(args as []));
      }) as typeof st.get;
      return st;
    }) as typeof db.prepare;
    store = new SqliteLongTermStore(db);
  });
  after(() => db.close());

  const scores = async (query: string) => (await store.searchText(user, query, { limit: 10 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);

  it('while the user\'s entries are the whole index, counts its matches without reading their owners', async () => {
    counts.joined = counts.bare = 0;
    const hits = await scores('ferry timetable harbour');
    assert.equal(hits.length, 10);
    assert.ok(counts.bare > 0, `bare counts ${counts.bare}`);
    assert.equal(counts.joined, 0);
  });

  it('once another user holds rows, reads every match\'s owner, and that user\'s rows change no score', async () => {
    const alone = await scores('timetable walk');
    const other = new SqliteLongTermStore(db);
    other.upsertSync(Array.from({ length: 300 }, (_, i) => entry('other', i, `timetable walk timetable walk ${i}`)));
    counts.joined = counts.bare = 0;
    // a new store: no count cached from before the other user wrote
    store = new SqliteLongTermStore(db);
    assert.deepEqual(await scores('timetable walk'), alone);
    assert.ok(counts.joined > 0, `joined counts ${counts.joined}`);
    assert.equal(counts.bare, 0);
  });
});
