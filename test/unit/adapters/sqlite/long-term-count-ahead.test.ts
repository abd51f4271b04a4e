import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { COMMON_TERM_DOCS } from '../../../../src/retrieval/query-terms.js';
import { entry } from '../../../contract/long-term.contract.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A big user's first search counts its words' document frequencies before the search's snapshot,
 * in the process's slices, not inside it: on a fresh connection they were a third of the ~120 ms a
 * big user's first search held the event loop. Checked where it shows: the counting statements run
 * inside the search's transaction (none) and before it, and the hits, which are the same as a store
 * counting inside the snapshot finds (searchTextSync on another connection to the file).
 */
describe('SQLite long-term store: a big user\'s word counts before the search', () => {
  it('counts the words of a first search outside its transaction, and finds what a search counting inside finds', async () => {
    const path = join(tmpDir(), 'ahead.db');
    const db = openDatabase(path);
    const store = new SqliteLongTermStore(db);
    const topics = ['ferry', 'harbour', 'market', 'violin', 'garden'];
    await store.upsert(Array.from({ length: COMMON_TERM_DOCS + 200 }, (_, i) => entry('ann', `day ${i}: the ${topics[i % 5]} trip with ${topics[(i * 3) % 5]} friends and note ${i % 37}`)));

    // the statements that count a word's entries (the user's alone, or the whole index's when every row is the user's)
    const counted = { inside: 0, outside: 0 };
    const statements = (store as unknown as { s: Record<string, { get: (...a: unknown[]) => unknown }> }).s;
    for (const name of ['userDocsCapped', 'wholeIndexDocsCapped']) {
      const st = statements[name]!;
      const get = st.get.bind(st);
      st.get = (...a: unknown[]) => (db.inTransaction ? counted.inside++ : counted.outside++, get(...a));
    }
    const query = 'the violin trip to the harbour market';
    const first = await store.searchText('ann', query, { limit: 10 });
    assert.ok(counted.outside >= 3, `${counted.outside} words counted before the search`);
    assert.equal(counted.inside, 0, 'none counted inside the search');

    // the same search on a connection whose counts are all taken inside the snapshot
    const other = new SqliteLongTermStore(openDatabase(path) as Db);
    const reference = other.searchTextSync('ann', query, { limit: 10 });
    assert.deepEqual(first.map((h) => [h.entry.id, h.bm25]), reference.map((h) => [h.entry.id, h.bm25]));
    assert.equal(first.length, 10);
    // counts kept: a second search counts nothing
    const before = { ...counted };
    await store.searchText('ann', query, { limit: 10 });
    assert.deepEqual(counted, before, 'a second search counts nothing, inside or before');
  });
});
