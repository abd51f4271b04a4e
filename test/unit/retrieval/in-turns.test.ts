import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inTurns } from '../../../src/retrieval/in-turns.js';

describe('inTurns', () => {
  // a clock of the test's own, moved by the work alone: on a loaded machine the real one also moves
  // while the process waits for a core, and a turn came after the first item
  let clock = 0;
  const now = () => clock;

  it('gives the event loop a turn once the work has run its slice, and runs every item in order', async () => {
    const seen: string[] = [];
    setImmediate(() => seen.push('turn'));
    await inTurns([1, 2, 3, 4], (i) => {
      seen.push(`item ${i}`);
      clock += 3;
    }, 5, now);
    // 6 ms after the second item: the turn comes before the third
    assert.deepEqual(seen, ['item 1', 'item 2', 'turn', 'item 3', 'item 4']);
  });

  it('runs quick work in the turn it was called in', async () => {
    const seen: string[] = [];
    setImmediate(() => seen.push('turn'));
    await inTurns([1, 2, 3], (i) => seen.push(`item ${i}`), 1, now);
    seen.push('done');
    assert.deepEqual(seen, ['item 1', 'item 2', 'item 3', 'done']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.at(-1), 'turn');
  });
});
