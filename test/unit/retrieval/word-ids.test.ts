// Word ids (src/retrieval/word-ids.ts): one id per word, kept until a caller settles a table grown past
// its limit, and then given afresh under a new generation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settle, wordCount, wordId, wordOf } from '../../../src/retrieval/word-ids.js';

describe('word ids', () => {
  it('gives a word one id, and the id its word', () => {
    const a = wordId('ferry');
    const b = wordId('hotel');
    assert.notEqual(a, b);
    assert.equal(wordId('ferry'), a);
    assert.equal(wordOf(b), 'hotel');
    assert.ok(wordCount() > Math.max(a, b));
  });

  it('starts afresh under a new generation only past the limit, and only when settled', () => {
    const generation = settle();
    wordId('naxos');
    assert.equal(settle(wordCount()), generation, 'within the limit: the same table');
    const before = wordCount();
    wordId('kayak');
    assert.equal(wordCount(), before + 1, 'a new word is added, whatever the limit, until settled');
    assert.equal(settle(0), generation + 1);
    assert.equal(wordCount(), 0);
    assert.equal(wordId('kayak'), 0, 'ids are given from the start again');
  });
});
