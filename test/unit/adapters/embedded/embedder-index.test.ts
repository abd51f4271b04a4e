import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbedderIndex } from '../../../../src/adapters/embedded/embedder-index.js';
import { clustered, exactTop } from './data.js';

const DIM = 64;

/** ids as the scan ranks them: rowid i + 1 stands for vector i */
function nearest(ix: EmbedderIndex, q: Float32Array, user: string, k: number, session?: string): number[] {
  return ix.nearest(q, user, session, k).rowids.map((r) => r - 1);
}

describe('EmbedderIndex (int8 partitions per user)', () => {
  it('ranks like the exact scan, within the user only', () => {
    const { vectors, near } = clustered(3000, DIM, 1);
    const ix = new EmbedderIndex('e', DIM);
    vectors.forEach((v, i) => ix.put(`v${i}`, i % 3 === 0 ? 'other' : 'me', `s${i % 7}`, i + 1, v, 0, 0));
    let hit = 0;
    for (let t = 0; t < 50; t++) {
      const q = near(t * 37);
      const want = exactTop(vectors, q, 8, (i) => i % 3 !== 0);
      const got = nearest(ix, q, 'me', 24);
      assert.ok(got.every((i) => i % 3 !== 0), 'only the user\'s rows');
      hit += want.filter((i) => got.includes(i)).length;
    }
    assert.ok(hit / (50 * 8) >= 0.99, `exact top 8 among 24 candidates: ${hit / 400}`);
  });

  it('ranks the rows a filter allows as the unfiltered scan orders them, in a partition scanned with a mask, after removals and puts too', () => {
    const { vectors, near } = clustered(6000, DIM, 4);
    const ix = new EmbedderIndex('e', DIM);
    vectors.forEach((v, i) => ix.put(`v${i}`, 'u', 's', i + 1, v, 0, 0));
    // rowids 1..6000 and those of the rows put below: every third allowed
    const allowed = new Set(Array.from({ length: 7000 }, (_, i) => i + 1).filter((rowid) => rowid % 3 === 0));
    const check = (q: Float32Array, what: string) => {
      const all = ix.nearest(q, 'u', undefined, 100_000).rowids;
      for (const r of [1, 8, 24]) assert.deepEqual(ix.nearest(q, 'u', undefined, r, allowed).rowids, all.filter((x) => allowed.has(x)).slice(0, r), `${what}, r ${r}`);
    };
    for (let t = 0; t < 5; t++) check(near(t * 101), `query ${t}`);
    // the same Set after the rows moved: the last row fills a removed one's slot
    for (let i = 2; i < 6000; i += 7) ix.remove('u', `v${i}`);
    for (let t = 0; t < 5; t++) check(near(t * 103 + 1), `after removals, query ${t}`);
    // an allowed row put since: the best match of its query
    ix.put('new', 'u', 's', 6003, near(9, 0), 0, 0);
    assert.equal(ix.nearest(near(9, 0), 'u', undefined, 1, allowed).rowids[0], 6003);
    check(near(11), 'after a put');
  });

  it('filters by session', () => {
    const { vectors, near } = clustered(500, DIM, 2);
    const ix = new EmbedderIndex('e', DIM);
    vectors.forEach((v, i) => ix.put(`v${i}`, 'u', `s${i % 5}`, i + 1, v, 0, 0));
    const got = nearest(ix, near(3), 'u', 20, 's3');
    assert.equal(got.length, 20);
    assert.ok(got.every((i) => i % 5 === 3));
    assert.deepEqual(nearest(ix, near(3), 'u', 5, 'no-such-session'), []);
  });

  it('replaces in place, moves an id between users, removes with the rows kept dense', () => {
    const { vectors } = clustered(100, DIM, 3);
    const ix = new EmbedderIndex('e', DIM);
    vectors.forEach((v, i) => ix.put(`v${i}`, 'u', 's', i + 1, v, 0, 0));
    assert.equal(ix.size, 100);
    ix.put('v5', 'u', 's', 6, vectors[50]!, 0, 0); // new vector for v5
    assert.deepEqual(ix.nearest(vectors[50]!, 'u', undefined, 2).ids.sort(), ['v5', 'v50']);
    ix.put('v7', 'u2', 's', 8, vectors[7]!, 0, 0); // u2's own v7: ids are per user
    ix.remove('u', 'v7');
    assert.ok(!ix.nearest(vectors[7]!, 'u', undefined, 100).ids.includes('v7'));
    assert.deepEqual(ix.nearest(vectors[7]!, 'u2', undefined, 5).ids, ['v7'], "removing u's v7 leaves u2's");
    for (let i = 0; i < 100; i += 2) ix.remove('u', `v${i}`);
    const left = ix.nearest(vectors[1]!, 'u', undefined, 1000).ids;
    assert.equal(left.length, 49); // 50 odd ids, v7 removed
    assert.ok(left.every((id) => Number(id.slice(1)) % 2 === 1));
    for (let i = 1; i < 100; i += 2) ix.remove('u', `v${i}`);
    ix.remove('u2', 'v7');
    assert.equal(ix.size, 0);
    assert.deepEqual(ix.stats().users, 0);
    assert.deepEqual(ix.nearest(vectors[1]!, 'u', undefined, 5).ids, []);
  });

  it('reuses the memory of removed partitions', () => {
    const { vectors } = clustered(200, DIM, 4);
    const ix = new EmbedderIndex('e', DIM);
    for (let round = 0; round < 5; round++) {
      vectors.forEach((v, i) => ix.put(`r${round}-${i}`, `user-${round}`, 's', i + 1, v, 0, 0));
      vectors.forEach((_, i) => ix.remove(`user-${round}`, `r${round}-${i}`));
    }
    const after = ix.stats();
    vectors.forEach((v, i) => ix.put(`x${i}`, 'x', 's', i + 1, v, 0, 0));
    assert.equal(ix.stats().arenaBytes, after.arenaBytes, 'no new memory for a partition of a size seen before');
  });
});
