import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { KeptPostings } from '../../../../src/adapters/sqlite/kept-postings.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { watchPhraseReads } from '../../../helpers/phrase-reads.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A query word's matches are kept by the connection between searches (src/adapters/sqlite/kept-postings.ts):
 * read again only past the newest row they were read through, and all again once an entry changes or
 * goes. Each search must find what a store that never searched finds; what is read is counted at the
 * statement (the rowids each read returned).
 */
describe('the matches kept between searches', () => {
  let db: Db;
  let store: SqliteLongTermStore;
  const reads: Array<{ match: string; rowids: number }> = [];

  before(() => {
    db = openDatabase(join(tmpDir(), 'kept-postings.db'));
    watchPhraseReads(db, (match, rowids) => reads.push({ match, rowids }));
    store = new SqliteLongTermStore(db);
    store.upsertSync(Array.from({ length: 40 }, (_, i) => entry('ann', i, i % 4 === 0 ? `the ferry to Porto, note ${i}` : `a quiet walk, note ${i}`)));
  });
  after(() => db.close());

  const fresh = () => new SqliteLongTermStore(db);
  const found = async (s: SqliteLongTermStore, query: string) => (await s.searchText('ann', query, { limit: 50 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
  const rowidsRead = () => reads.reduce((n, r) => n + r.rowids, 0);

  it('reads nothing again while nothing is written', async () => {
    const first = await found(store, 'ferry');
    assert.equal(first.length, 10);
    reads.length = 0;
    assert.deepEqual(await found(store, 'ferry'), first);
    assert.equal(reads.length, 0, 'no phrase read');
  });

  it('after an insert, reads only past the rows kept, and finds the new one', async () => {
    await found(store, 'ferry');
    store.upsertSync([entry('ann', 100, 'the night ferry was late'), entry('bob', 0, 'a ferry of his own')]);
    reads.length = 0;
    const now = await found(store, 'ferry');
    const read = rowidsRead();
    assert.ok(reads.length > 0 && read <= 2, `only the new matches read: ${read} rowids`);
    assert.ok(now.some(([id]) => id === 'ann-100'), 'the new entry is found');
    assert.deepEqual(now, await found(fresh(), 'ferry'), 'as a store that never searched');
  });

  it('after an edit or a delete, reads everything again and never finds what went', async () => {
    await found(store, 'ferry');
    await store.delete('ann', ['ann-4']);
    await store.update('ann', 'ann-8', { content: 'a quiet walk, note 8' });
    reads.length = 0;
    const now = await found(store, 'ferry');
    assert.ok(rowidsRead() >= now.length, 'read afresh');
    assert.ok(!now.some(([id]) => id === 'ann-4' || id === 'ann-8'), 'neither the deleted nor the edited entry');
    assert.deepEqual(now, await found(fresh(), 'ferry'));
  });

  it("counts each word of one list apart: \"network'\" reads the list of \"network\" and is not recorded as it", async () => {
    const long = (i: number) => `${'the network was slow again that day and '.repeat(3)}${Array.from({ length: 130 }, (_, k) => `filler${i}w${k}`).join(' ')}`;
    store.upsertSync([entry('ann', 200, long(200)), entry('ann', 201, `a network note ${'plain words here '.repeat(40)}`)]);
    const scores = async (s: SqliteLongTermStore, query: string) => (await s.searchText('ann', query, { limit: 5 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
    const plain = await scores(store, 'network');
    const apostrophe = await scores(store, "network'");
    assert.deepEqual(apostrophe, await scores(fresh(), "network'"), 'as a store that never searched');
    assert.notDeepEqual(apostrophe, plain, 'the recorded count of "network" is not taken for it');
  });

  it('keeps the first `limit` matches of a limited read, and grows a short one past its newest row', () => {
    const kept = new KeptPostings();
    const rows = [3, 5, 9];
    const calls: number[] = [];
    const read = (after: number) => (calls.push(after), rows.filter((r) => r > after));
    assert.deepEqual(kept.matches('w', 9, 2, read), [3, 5], 'the first two');
    assert.deepEqual(kept.matches('w', 12, 2, read), [3, 5], 'full: a newer row cannot be among the first two');
    assert.deepEqual(kept.matches('all', 9, 0, read), [3, 5, 9]);
    rows.push(11);
    assert.deepEqual(kept.matches('all', 11, 0, read), [3, 5, 9, 11]);
    assert.deepEqual(calls, [0, 0, 9], 'read past row 9 once the table grew past it');
  });

  it('drops the lists used least recently past its bound, and only as many as the new one needs', () => {
    const kept = new KeptPostings(7);
    const calls: string[] = [];
    const read = (key: string, n: number) => () => (calls.push(key), Array.from({ length: n }, (_, i) => i + 1));
    kept.matches('a', 9, 0, read('a', 3));
    kept.matches('b', 9, 0, read('b', 2));
    kept.matches('c', 9, 0, read('c', 2));
    // a used again: b is now the least recently used
    kept.matches('a', 9, 0, read('a', 3));
    kept.matches('d', 9, 0, read('d', 2));
    kept.matches('a', 9, 0, read('a', 3));
    kept.matches('c', 9, 0, read('c', 2));
    kept.matches('b', 9, 0, read('b', 2));
    assert.deepEqual(calls, ['a', 'b', 'c', 'd', 'b'], 'd pushed b out alone; a and c stayed');
    // a list longer than the bound is read each time, and pushes nothing out
    kept.matches('huge', 9, 0, read('huge', 8));
    kept.matches('c', 9, 0, read('c', 2));
    assert.deepEqual(calls.slice(5), ['huge'], 'c stayed');
  });
  it('reads a word from its newest match down only as far as asked, and keeps what it read', () => {
    const kept = new KeptPostings();
    const rows = Array.from({ length: 300 }, (_, i) => i + 1);
    const reads: string[] = [];
    const above = (after: number) => (reads.push(`above ${after}`), rows.filter((r) => r > after));
    const below = (under: number, n: number) => (reads.push(`below ${under} ${n}`), rows.filter((r) => r < under).reverse().slice(0, n));
    const first = kept.newestOf('w', 300, above, below);
    assert.deepEqual(first.rowids.slice(0, 3), [300, 299, 298]);
    assert.equal(first.rowids.length, 64);
    first.more();
    first.more();
    assert.equal(first.rowids.length, 256);
    assert.equal(first.complete, false);
    first.more();
    assert.equal(first.complete, true, 'fewer than asked: none older');
    assert.deepEqual(first.rowids, rows.slice().reverse());
    assert.deepEqual(reads, ['below 301 64', 'below 237 64', 'below 173 128', 'below 45 256']);
    // a later search finds all of it kept; a row added since is read above the newest kept
    rows.push(301);
    const later = kept.newestOf('w', 301, above, below);
    assert.deepEqual(later.rowids.slice(0, 2), [301, 300]);
    assert.equal(later.rowids.length, 301);
    assert.equal(later.complete, true);
    assert.deepEqual(reads.slice(4), ['above 300']);
  });

  it('counts what a newest-first list grows by against its bound', () => {
    const kept = new KeptPostings(130);
    const rows = Array.from({ length: 300 }, (_, i) => i + 1);
    const reads: string[] = [];
    const below = (key: string) => (under: number, n: number) => (reads.push(key), rows.filter((r) => r < under).reverse().slice(0, n));
    const small = () => kept.matches('small', 300, 0, () => (reads.push('small'), rows.slice(0, 30)));
    small();
    const grown = kept.newestOf('w', 300, () => [], below('w'));
    small();
    grown.more();
    assert.equal(grown.rowids.length, 128);
    small();
    assert.deepEqual(reads, ['small', 'w', 'w', 'small'], 'grown to 128 of 130, it pushed the small list out');
    // grown past the bound: read, and no longer kept
    const tight = new KeptPostings(100);
    tight.newestOf('w', 300, () => [], below('tight')).more();
    tight.newestOf('w', 300, () => [], below('tight'));
    assert.deepEqual(reads.slice(4), ['tight', 'tight', 'tight']);
  });
});
