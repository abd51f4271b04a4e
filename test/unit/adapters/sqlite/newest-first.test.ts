import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ascendingWithin, indexAtOrBelow, newestFirst, wholeList, type Descending } from '../../../../src/adapters/sqlite/newest-first.js';

/** `ascending` read from the newest down, `step` rowids at a time, as KeptPostings.newestOf reads a word's matches */
function inSteps(ascending: readonly number[], step: number): Descending & { reads: number } {
  const all = [...ascending].reverse();
  const rowids: number[] = [];
  const list = {
    rowids,
    complete: false,
    reads: 0,
    more() {
      list.reads++;
      const older = all.slice(rowids.length, rowids.length + step);
      rowids.push(...older);
      list.complete = older.length < step;
    },
  };
  return list;
}

let seed = 7;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const randomLists = () =>
  Array.from({ length: 1 + Math.floor(random() * 6) }, () => [...new Set(Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 200)))].sort((a, b) => a - b));

describe('newestFirst: the union of rowid lists, newest first', () => {
  const lists = [[1, 4, 9, 12], [2, 4, 10], [], [3, 9, 15]];
  const ALL = { from: 0, to: Number.MAX_SAFE_INTEGER };

  it('hands back every rowid once, newest first, n at a time', () => {
    const next = newestFirst(lists.map(wholeList), ALL);
    assert.deepEqual(next(3), [15, 12, 10]);
    assert.deepEqual(next(4), [9, 4, 3, 2]);
    assert.deepEqual(next(4), [1]);
    assert.deepEqual(next(4), []);
  });

  it('keeps within the span, both ends included', () => {
    assert.deepEqual(newestFirst(lists.map(wholeList), { from: 3, to: 10 })(100), [10, 9, 4, 3]);
    assert.deepEqual(newestFirst(lists.map(wholeList), { from: 13, to: 14 })(100), []);
    assert.deepEqual(newestFirst([], { from: 0, to: 100 })(5), []);
  });

  it('reads a list further down only once what it holds is handed back', () => {
    const long = inSteps(Array.from({ length: 100 }, (_, i) => 2 * i), 4);
    const next = newestFirst([long, wholeList([197, 199])], ALL);
    assert.deepEqual(next(3), [199, 198, 197]);
    // 198 alone was needed of the long list, but its next rowid had to be known: one read of 4
    assert.equal(long.reads, 1);
    assert.deepEqual(next(5), [196, 194, 192, 190, 188]);
    assert.equal(long.reads, 2);
    assert.equal(long.rowids.length, 8);
  });

  it('agrees with sorting the union, on lists of random rowids read whole or in steps', () => {
    for (let round = 0; round < 40; round++) {
      const many = randomLists();
      const from = Math.floor(random() * 100);
      const to = from + Math.floor(random() * 150);
      const want = [...new Set(many.flat())].filter((r) => r >= from && r <= to).sort((a, b) => b - a);
      const sources = many.map((l, i) => (i % 2 === round % 2 ? wholeList(l) : inSteps(l, 1 + Math.floor(random() * 5))));
      const next = newestFirst(sources, { from, to });
      const got: number[] = [];
      for (let part = next(7); part.length > 0; part = next(7)) {
        got.push(...part);
        // every rowid handed back is held by each list that has it: the rows a search scores are there
        const floor = got[got.length - 1]!;
        sources.forEach((s, i) => assert.deepEqual(ascendingWithin(s, floor, to), many[i]!.filter((r) => r >= floor && r <= to)));
      }
      assert.deepEqual(got, want);
    }
  });
});

describe('indexAtOrBelow', () => {
  it('finds the first rowid at or below a rowid, in a descending list', () => {
    assert.equal(indexAtOrBelow([8, 3, 3, 1], 3), 1);
    assert.equal(indexAtOrBelow([8, 3, 3, 1], 9), 0);
    assert.equal(indexAtOrBelow([8, 3, 3, 1], 0), 4);
    assert.equal(indexAtOrBelow([], 5), 0);
  });
});
