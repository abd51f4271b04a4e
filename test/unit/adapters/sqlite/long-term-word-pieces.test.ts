import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { MAX_WORD_PIECES, PHRASES_PER_SEARCH, SqliteLongTermStore, wordMatcher } from '../../../../src/adapters/sqlite/long-term.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { watchPhraseReads } from '../../../helpers/phrase-reads.js';
import { tmpDir } from '../../../helpers/tmp.js';

/** the quoted strings of an FTS5 match expression, as FTS5 reads them */
const quoted = (match: string) => [...match.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!);

/** a hyphenated chain of `n` distinct pieces: "p0-p1-p2-…" */
const chain = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`).join('-');

/** the quoted strings of a match that are phrases (several tokens, checked side by side) */
const phrasesIn = (match: string) => quoted(match).filter((q) => !/^[\p{L}\p{N}]+$/u.test(q));

/**
 * A word holding hyphens, apostrophes or underscores is several tokens to FTS5, which checks a phrase at
 * every place its first token stands in every matched row: a 4,000-character query of one such word
 * against a turn of the same held the event loop for half a second. A search reads at most
 * PHRASES_PER_SEARCH words of two pieces as phrases; in any other such word each of its first
 * MAX_WORD_PIECES pieces is required, each a plain token, and words searched alike are read once. What
 * is read is counted at the statement (watchPhraseReads).
 */
describe('a query word of several pieces', () => {
  let db: Db;
  let store: SqliteLongTermStore;
  const reads: string[] = [];

  before(() => {
    db = openDatabase(join(tmpDir(), 'word-pieces.db'));
    watchPhraseReads(db, (match) => reads.push(match));
    store = new SqliteLongTermStore(db);
    store.upsertSync([
      entry('ann', 0, 'My mother-in-law visits on Sunday'),
      entry('ann', 1, 'The law office is closed on Sunday'),
      entry('ann', 2, `a log line: ${chain(2000)}`),
      entry('ann', 3, 'we booked the check-in for nine'),
      entry('ann', 4, 'check the boiler in the morning'),
    ]);
  });
  after(() => db.close());

  const ids = async (query: string) => (await store.searchText('ann', query, { limit: 10 })).map((h) => h.entry.id);

  it('reads a word of two pieces as a phrase, PHRASES_PER_SEARCH of them, and any other as its pieces', () => {
    // each piece with the owner's prefix, as the index holds the owner's words (owned-text.ts)
    const matchOf = wordMatcher('qq');
    assert.equal(matchOf('harbour'), '"qqharbour"');
    assert.equal(matchOf("o'brien"), '"qqo qqbrien"');
    assert.equal(matchOf('mother-in-law'), '("qqin" AND "qqlaw" AND "qqmother")');
    assert.deepEqual(quoted(matchOf('a-a-a-a-b')), ['qqa', 'qqb'], 'a piece repeated is required once');
    const long = matchOf(chain(2000));
    assert.equal(quoted(long).length, MAX_WORD_PIECES);
    assert.deepEqual(phrasesIn(long), []);
    const twos = Array.from({ length: PHRASES_PER_SEARCH + 2 }, (_, i) => matchOf(`w${i}-x${i}`));
    assert.equal(twos.filter((m) => phrasesIn(m).length > 0).length, PHRASES_PER_SEARCH - 1, "o'brien was one");
    assert.equal(matchOf("o'brien"), '"qqo qqbrien"', 'a phrase already read stays one');
    assert.equal(wordMatcher('qq')('w9-x9'), '"qqw9 qqx9"', 'each search has its own');
  });

  it('finds the turn holding the word, not one holding its pieces apart', async () => {
    assert.deepEqual(await ids('check-in'), ['ann-3']);
    assert.deepEqual(await ids('mother-in-law'), ['ann-0']);
  });

  it('finds a turn by a 4,000-character word of it, reading no phrase', async () => {
    reads.length = 0;
    assert.deepEqual(await ids(chain(2000).slice(0, 4000)), ['ann-2']);
    assert.ok(reads.length > 0);
    for (const match of reads) assert.deepEqual(phrasesIn(match), [], `read as plain tokens: ${match.slice(0, 200)}`);
  });

  it('reads at most PHRASES_PER_SEARCH phrases in a search of many words of two pieces', async () => {
    reads.length = 0;
    await ids(Array.from({ length: 32 }, (_, i) => `p${i}-p${i + 1}`).join(' '));
    assert.equal(reads.length, 32);
    assert.equal(reads.filter((m) => phrasesIn(m).length > 0).length, PHRASES_PER_SEARCH);
  });

  it('reads words searched alike once, finding what one of them finds', async () => {
    const one = await ids('sunday-office-law');
    assert.deepEqual(one, ['ann-1']);
    // not from the first search's words kept (kept-postings.ts): the next search reads past this row
    store.upsertSync([entry('zed', 0, 'an unrelated note')]);
    reads.length = 0;
    assert.deepEqual(await ids('sunday-office-law law-office-sunday office-law-sunday-law'), one);
    assert.equal(reads.length, 1, `one read: ${reads.join(' | ')}`);
  });
});
