import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { indexAbove, newestFirst } from '../../../../src/adapters/sqlite/newest-first.js';

describe('newestFirst: the union of ascending rowid lists, newest first', () => {
  const lists = [[1, 4, 9, 12], [2, 4, 10], [], [3, 9, 15]];

  it('hands back every rowid once, newest first, n at a time', () => {
    const next = newestFirst(lists, { from: 0, to: Number.MAX_SAFE_INTEGER });
    assert.deepEqual(next(3), [15, 12, 10]);
    assert.deepEqual(next(4), [9, 4, 3, 2]);
    assert.deepEqual(next(4), [1]);
    assert.deepEqual(next(4), []);
  });

  it('keeps within the span, both ends included', () => {
    assert.deepEqual(newestFirst(lists, { from: 3, to: 10 })(100), [10, 9, 4, 3]);
    assert.deepEqual(newestFirst(lists, { from: 13, to: 14 })(100), []);
    assert.deepEqual(newestFirst([], { from: 0, to: 100 })(5), []);
  });

  it('agrees with sorting the union, on lists of random rowids', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 20; round++) {
      const many = Array.from({ length: 1 + Math.floor(random() * 6) }, () => [...new Set(Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 200)))].sort((a, b) => a - b));
      const from = Math.floor(random() * 100);
      const to = from + Math.floor(random() * 150);
      const want = [...new Set(many.flat())].filter((r) => r >= from && r <= to).sort((a, b) => b - a);
      const next = newestFirst(many, { from, to });
      const got: number[] = [];
      for (let part = next(7); part.length > 0; part = next(7)) got.push(...part);
      assert.deepEqual(got, want);
    }
  });
});

describe('indexAbove', () => {
  it('finds the first rowid above a rowid', () => {
    assert.equal(indexAbove([1, 3, 3, 8], 3), 3);
    assert.equal(indexAbove([1, 3, 3, 8], 0), 0);
    assert.equal(indexAbove([1, 3, 3, 8], 8), 4);
    assert.equal(indexAbove([], 5), 0);
  });
});
