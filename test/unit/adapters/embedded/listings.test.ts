import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListingCache } from '../../../../src/adapters/embedded/listings.js';
import type { PartitionShape } from '../../../../src/adapters/embedded/partition.js';

function shape(): PartitionShape & { version: number } {
  return { n: 100, version: 0, rowsOfSessions: () => 0, hint: () => undefined, setHint: () => {} };
}

describe('ListingCache', () => {
  it("gives a listing back only for the partition and version it was read at, and only to its own embedder, user and filter", () => {
    const cache = new ListingCache();
    const [u, v] = [shape(), shape()];
    const rows = new Set([1, 2, 3]);
    cache.set('e', 'u', 'f', u, 0, rows);
    assert.equal(cache.get('e', 'u', 'f', u), rows);
    assert.equal(cache.get('e', 'v', 'f', v), undefined, 'another user');
    assert.equal(cache.get('other', 'u', 'f', u), undefined, 'another embedder');
    assert.equal(cache.get('e', 'u', 'g', u), undefined, 'another filter');
    assert.equal(cache.get('e', 'u', 'f', shape()), undefined, 'a partition made anew (a reload, deleteAll)');
    u.version++;
    assert.equal(cache.get('e', 'u', 'f', u), undefined, 'a write to the user retires it');
    assert.deepEqual(cache.stats(), { listings: 0, rows: 0 }, 'and drops it');
    u.version = 5;
    cache.set('e', 'u', 'f', u, 4, rows);
    assert.equal(cache.get('e', 'u', 'f', u), undefined, 'read before a write applied meanwhile: never used');
  });

  it('holds at most maxRows rowids and maxEntries listings, the least recently used dropped first', () => {
    const cache = new ListingCache(10, 3);
    const s = shape();
    const of = (n: number) => new Set(Array.from({ length: n }, (_, i) => i));
    cache.set('e', 'u', 'a', s, 0, of(4));
    cache.set('e', 'u', 'b', s, 0, of(4));
    assert.ok(cache.get('e', 'u', 'a', s));
    cache.set('e', 'u', 'c', s, 0, of(4));
    assert.deepEqual(cache.stats(), { listings: 2, rows: 8 });
    assert.equal(cache.get('e', 'u', 'b', s), undefined, 'b was the least recently used');
    assert.ok(cache.get('e', 'u', 'a', s) && cache.get('e', 'u', 'c', s));
    cache.set('e', 'u', 'big', s, 0, of(11));
    assert.equal(cache.get('e', 'u', 'big', s), undefined, 'larger than the whole cache: not kept');
    for (const k of ['x', 'y', 'z']) cache.set('e', 'u', k, s, 0, of(1));
    assert.equal(cache.stats().listings, 3);
    cache.clear();
    assert.deepEqual(cache.stats(), { listings: 0, rows: 0 });
  });
});
