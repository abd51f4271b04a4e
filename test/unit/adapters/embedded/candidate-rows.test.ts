import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CandidateRows } from '../../../../src/adapters/embedded/candidate-rows.js';
import type { FullRow } from '../../../../src/adapters/embedded/store.js';

/** a row whose text is `chars` long, with a 4-dimension vector (16 bytes) */
function row(rowid: number, chars = 10): FullRow {
  const payload = { user_id: 'u', session_id: 's', role: 'user', name: null, kind: 'turn', content: 'x'.repeat(chars), content_hash: `h${rowid}`, created_at: '2026-01-01T00:00:00.000Z', metadata: null } as const;
  return { id: `m${rowid}`, part: 0, embedder: 'e', payload, vector: new Float32Array(4) };
}

/** a store read that records what it was asked and returns a fresh row for each rowid below 100 (the rest: gone) */
function store() {
  const asked: number[][] = [];
  const read = async (rowids: readonly number[]) => {
    asked.push([...rowids]);
    return new Map(rowids.filter((r) => r < 100).map((r) => [r, row(r)] as const));
  };
  return { asked, read };
}

describe('CandidateRows', () => {
  it('reads only the rows it does not keep, and gives back the very rows it kept', async () => {
    const rows = new CandidateRows();
    const s = store();
    const first = await rows.of([1, 2, 3], s.read);
    const again = await rows.of([2, 3, 4, 500], s.read);
    assert.deepEqual(s.asked, [[1, 2, 3], [4, 500]]);
    assert.equal(again.get(2), first.get(2), 'the same object: its text is the same string');
    assert.deepEqual([...again.keys()].sort((a, b) => a - b), [2, 3, 4], 'a row the store no longer holds is absent');
    assert.equal(rows.stats().rows, 4);
  });

  it('keeps nothing after a drop, nor what a read that began before the drop returned', async () => {
    const rows = new CandidateRows();
    const s = store();
    await rows.of([1], s.read);
    rows.drop();
    assert.equal(rows.stats().rows, 0);
    // the drop lands while the read is in flight (another process's change replayed meanwhile)
    const read = async (rowids: readonly number[]) => {
      const out = await s.read(rowids);
      rows.drop();
      return out;
    };
    const got = await rows.of([1, 2], read);
    assert.deepEqual([...got.keys()], [1, 2], 'the caller still gets what was read');
    assert.equal(rows.stats().rows, 0, 'but none of it is kept');
    await rows.of([1, 2], s.read);
    assert.deepEqual(s.asked.at(-1), [1, 2], 'so the next search reads them again');
  });

  it('holds at most its bound, the oldest kept going first; a row larger than the bound is not kept', async () => {
    const size = row(0, 100).payload.content.length + 16 + 200;
    const rows = new CandidateRows(3 * size);
    const s = store();
    await rows.of([1, 2, 3], async (ids) => new Map(ids.map((r) => [r, row(r, 100)] as const)));
    await rows.of([4], async (ids) => new Map(ids.map((r) => [r, row(r, 100)] as const)));
    assert.deepEqual(rows.stats(), { rows: 3, bytes: 3 * size });
    await rows.of([1, 2, 3, 4], s.read);
    assert.deepEqual(s.asked, [[1]], 'row 1, the oldest, went to make room for row 4');
    await rows.of([7], async (ids) => new Map(ids.map((r) => [r, row(r, 4 * size)] as const)));
    await rows.of([7], s.read);
    assert.deepEqual(s.asked.at(-1), [7], 'too large to keep: read each time');
  });

  it('keeps the newest rows within its bound through thousands of evictions, and starts over after a drop', async () => {
    const size = row(0, 100).payload.content.length + 16 + 200;
    const rows = new CandidateRows(3 * size);
    const big = async (ids: readonly number[]) => new Map(ids.map((r) => [r, row(r, 100)] as const));
    for (let r = 0; r < 5_000; r++) await rows.of([r], big);
    assert.deepEqual(rows.stats(), { rows: 3, bytes: 3 * size });
    const s = store();
    await rows.of([4_996, 4_997, 4_998, 4_999], s.read);
    assert.deepEqual(s.asked, [[4_996]], 'the three newest kept, the one before them evicted');
    rows.drop();
    for (let r = 0; r < 4; r++) await rows.of([r], big);
    assert.deepEqual(rows.stats(), { rows: 3, bytes: 3 * size });
    await rows.of([0, 1, 2, 3], s.read);
    assert.deepEqual(s.asked.at(-1), [0], 'after the drop the order is the new rows\' alone');
  });
});
