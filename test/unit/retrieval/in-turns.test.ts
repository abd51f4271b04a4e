import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inTurns } from '../../../src/retrieval/in-turns.js';

/** holds the thread for `ms`, as computing a long text's facts does */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('inTurns', () => {
  it('gives the event loop a turn once the work has run its slice, and runs every item in order', async () => {
    const seen: string[] = [];
    setImmediate(() => seen.push('turn'));
    await inTurns([1, 2, 3, 4], (i) => {
      seen.push(`item ${i}`);
      busy(3);
    }, 5);
    // 6 ms after the second item: the turn comes before the third
    assert.deepEqual(seen, ['item 1', 'item 2', 'turn', 'item 3', 'item 4']);
  });

  it('runs quick work in the turn it was called in', async () => {
    const seen: string[] = [];
    setImmediate(() => seen.push('turn'));
    await inTurns([1, 2, 3], (i) => seen.push(`item ${i}`), 1_000);
    seen.push('done');
    assert.deepEqual(seen, ['item 1', 'item 2', 'item 3', 'done']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.at(-1), 'turn');
  });
});
