import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyQueue } from '../../src/key-queue.js';

describe('KeyQueue', () => {
  it('gives keys back oldest first, across the compactions of its array, and nothing once empty', () => {
    const q = new KeyQueue<number>();
    const taken: number[] = [];
    // pushes and shifts interleaved as a full cache's evictions are, long enough to compact many times
    for (let k = 0; k < 3_000; k++) q.push(k);
    for (let k = 3_000; k < 20_000; k++) {
      q.push(k);
      taken.push(q.shift()!);
    }
    assert.equal(q.size, 3_000);
    assert.deepEqual(taken, Array.from({ length: 17_000 }, (_, i) => i));
    const rest: number[] = [];
    for (let k = q.shift(); k !== undefined; k = q.shift()) rest.push(k);
    assert.deepEqual(rest, Array.from({ length: 3_000 }, (_, i) => 17_000 + i));
    assert.equal(q.size, 0);
    assert.equal(q.shift(), undefined);
  });

  it('holds nothing after clear', () => {
    const q = new KeyQueue<string>();
    q.push('a');
    q.push('b');
    q.clear();
    assert.equal(q.size, 0);
    assert.equal(q.shift(), undefined);
    q.push('c');
    assert.equal(q.shift(), 'c');
  });
});
