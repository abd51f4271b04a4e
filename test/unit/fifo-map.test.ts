import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FifoMap } from '../../src/fifo-map.js';

describe('FifoMap', () => {
  it('gives entries back oldest first, across the compactions of its key order, and nothing once empty', () => {
    const m = new FifoMap<number, string>();
    const taken: number[] = [];
    // sets and shifts interleaved as a full cache's evictions are, long enough to compact many times
    for (let k = 0; k < 3_000; k++) m.set(k, `v${k}`);
    for (let k = 3_000; k < 20_000; k++) {
      m.set(k, `v${k}`);
      const [key, value] = m.shift()!;
      assert.equal(value, `v${key}`);
      taken.push(key);
    }
    assert.equal(m.size, 3_000);
    assert.deepEqual(taken, Array.from({ length: 17_000 }, (_, i) => i));
    assert.equal(m.has(16_999), false);
    assert.equal(m.get(17_000), 'v17000');
    const rest: number[] = [];
    for (let e = m.shift(); e !== undefined; e = m.shift()) rest.push(e[0]);
    assert.deepEqual(rest, Array.from({ length: 3_000 }, (_, i) => 17_000 + i));
    assert.equal(m.size, 0);
    assert.equal(m.shift(), undefined);
  });

  it('keeps an existing key in its place when set again, with the new value', () => {
    const m = new FifoMap<string, number>();
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 3);
    assert.equal(m.size, 2);
    assert.deepEqual(m.shift(), ['a', 3]);
    assert.deepEqual(m.shift(), ['b', 2]);
    assert.equal(m.shift(), undefined, 'a key set twice is given back once');
  });

  it('holds nothing after clear', () => {
    const m = new FifoMap<string, number>();
    m.set('a', 1);
    m.set('b', 2);
    m.clear();
    assert.equal(m.size, 0);
    assert.equal(m.shift(), undefined);
    m.set('c', 3);
    assert.deepEqual(m.shift(), ['c', 3]);
  });
});
