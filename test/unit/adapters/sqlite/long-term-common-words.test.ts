import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { ownerPrefix } from '../../../../src/adapters/sqlite/owned-text.js';
import { COMMON_TERM_DOCS, commonFrom } from '../../../../src/retrieval/query-terms.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { watchPhraseReads } from '../../../helpers/phrase-reads.js';
import { tmpDir } from '../../../helpers/tmp.js';

/** a user's i-th entry: "harbour" in most (common), "ferry" in a few, "lantern" in none */
const text = (i: number) => (i % 20 === 0 ? `the ferry left the harbour late, note ${i}` : i % 3 === 0 ? `lunch with Ana, note ${i}` : `a walk by the harbour, note ${i}`);

/**
 * A small user's common words (held by commonFrom(docs) of its entries or more) are left out of a
 * search while a rarer word matches; the search learns it by reading the word's first matches. A word
 * found common is not read again by the searches of the next minute — and those find what a store
 * that never searched finds. What is read is counted at the statement: each phrase read and its words.
 */
describe("a small user's common words", () => {
  let db: Db;
  let store: SqliteLongTermStore;
  const reads: string[] = [];

  before(() => {
    db = openDatabase(join(tmpDir(), 'common-words.db'));
    new SqliteLongTermStore(db).upsertSync(Array.from({ length: 200 }, (_, i) => entry('ann', i, text(i))));
    watchPhraseReads(db, (match) => reads.push(match));
    store = new SqliteLongTermStore(db);
  });
  after(() => db.close());

  const fresh = () => new SqliteLongTermStore(db);
  const scores = async (s: SqliteLongTermStore, user: string, query: string) => (await s.searchText(user, query, { limit: 10 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
  /** reads of the user's word (prefixed as the index holds it: owned-text.ts) */
  const readsOf = (word: string, user = 'ann') => reads.filter((m) => m.includes(`"${ownerPrefix(user)}${word}"`)).length;

  it('reads a common word once, then leaves it unread while a rarer word matches, finding the same', async () => {
    reads.length = 0;
    const first = await scores(store, 'ann', 'ferry harbour');
    assert.equal(readsOf('harbour'), 1, 'read to learn that it is common');
    assert.ok(first.length > 0 && first.length <= 10);
    // another user's entry: every word the first search read is read again past it (kept-postings.ts)
    fresh().upsertSync([entry('zed', 0, 'the ferry and the harbour')]);
    reads.length = 0;
    assert.deepEqual(await scores(store, 'ann', 'ferry harbour lantern'), first, 'the same hits and scores');
    assert.equal(readsOf('harbour'), 0, 'known common: not read');
    assert.equal(readsOf('ferry'), 1, 'a rarer word is read');
    assert.deepEqual(await scores(fresh(), 'ann', 'ferry harbour'), first, 'as a store that never searched');
  });

  it('still searches a common word when nothing rarer matches', async () => {
    const alone = await scores(fresh(), 'ann', 'harbour lantern');
    assert.equal(alone.length, 10);
    reads.length = 0;
    assert.deepEqual(await scores(store, 'ann', 'harbour lantern'), alone);
    assert.equal(readsOf('harbour'), 1, 'read whole, once');
  });

  it("knows one user's common words for that user only", async () => {
    fresh().upsertSync(Array.from({ length: 200 }, (_, i) => entry('bob', i, i % 2 === 0 ? `the harbour cafe, note ${i}` : i % 4 === 1 ? `harbour view at dusk, note ${i}` : `ferry to the harbour ${i}`)));
    fresh().upsertSync(Array.from({ length: 200 }, (_, i) => entry('cem', i, i % 40 === 0 ? `the harbour cafe, note ${i}` : `ferry times, note ${i}`)));
    reads.length = 0;
    const cem = await scores(store, 'cem', 'harbour ferry');
    assert.equal(readsOf('harbour', 'cem'), 1, "ann's common word is read for cem, for whom it is rare");
    assert.deepEqual(cem, await scores(fresh(), 'cem', 'harbour ferry'));
  });

  it('counts again once the user has grown past the drift', async () => {
    await scores(store, 'ann', 'ferry harbour');
    fresh().upsertSync(Array.from({ length: 100 }, (_, i) => entry('ann', 1000 + i, `a lantern by the ferry, note ${i}`)));
    reads.length = 0;
    assert.deepEqual(await scores(store, 'ann', 'ferry harbour'), await scores(fresh(), 'ann', 'ferry harbour'));
    assert.ok(readsOf('harbour') >= 1, 'a count among 200 entries does not answer for 300');
  });

  it('a count made up to a small user\'s threshold is not the big user\'s document frequency', async () => {
    // just below COMMON_TERM_DOCS, then just above it (within the drift): the word was counted up to
    // the small user's threshold, which the big user's counts (up to COMMON_TERM_DOCS) must not take
    const n = COMMON_TERM_DOCS - 10;
    fresh().upsertSync(Array.from({ length: n }, (_, i) => entry('dee', i, i % 50 === 0 ? `ferry harbour, note ${i}` : i % 2 === 0 ? `harbour and ferry ${i}` : `harbour light ${i}`)));
    reads.length = 0;
    await scores(store, 'dee', 'ferry harbour');
    assert.ok(readsOf('harbour', 'dee') >= 1 && commonFrom(n) < COMMON_TERM_DOCS);
    fresh().upsertSync(Array.from({ length: 20 }, (_, i) => entry('dee', n + i, `harbour ferry, late ${i}`)));
    assert.deepEqual(await scores(store, 'dee', 'ferry harbour'), await scores(fresh(), 'dee', 'ferry harbour'));
  });
});
