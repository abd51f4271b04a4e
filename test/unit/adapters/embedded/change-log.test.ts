import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnChanges } from '../../../../src/adapters/embedded/change-log.js';

describe('OwnChanges', () => {
  it('merges adjacent ranges and answers membership and counts', () => {
    const own = new OwnChanges();
    own.add(0, 10);
    own.add(10, 20); // adjacent: one range
    own.add(25, 30);
    own.add(30, 30); // empty: ignored
    own.add(40, 41);
    assert.deepEqual([0, 1, 20, 21, 25, 26, 30, 31, 41, 42].map((s) => own.has(s)), [false, true, true, false, false, true, true, false, true, false]);
    assert.equal(own.countIn(0, 100), 20 + 5 + 1);
    assert.equal(own.countIn(15, 27), 5 + 2);
    own.dropThrough(30);
    assert.equal(own.has(26), false);
    assert.equal(own.has(41), true);
  });
});
