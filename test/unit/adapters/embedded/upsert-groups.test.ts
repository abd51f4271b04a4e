import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex, flushGroups } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import type { VectorPoint } from '../../../../src/ports/vector-index.js';
import { countTurns } from '../../../helpers/loop-turns.js';
import { tmpDir } from '../../../helpers/tmp.js';

const DIM = 8;
const tag = { id: 'groups-8', dim: DIM };

function point(user: string, entry: number, part: number): VectorPoint {
  const v = Float32Array.from({ length: DIM }, (_, d) => (d === (entry + part) % DIM ? 1 : 0.1));
  return { id: `${user}-${entry}`, part, vector: v, payload: { user_id: user, session_id: 's', role: 'assistant', name: null, kind: 'turn', content: `turn ${entry}`, content_hash: `h${entry}`, created_at: '2026-01-01T00:00:00.000Z', metadata: null } };
}

/** an entry's whole text (part 0) and `passages` more */
const entry = (user: string, n: number, passages: number) => Array.from({ length: passages + 1 }, (_, part) => point(user, n, part));

/**
 * The upserts of one turn of the event loop are written a group of at most 256 vectors a transaction,
 * in the process's slices of work: the passages of 30 turns of 32,000 characters (~1,800 vectors) were
 * one transaction that held the event loop ~60 ms. An entry's passages stay in one group, so the
 * store's trim of the parts beyond its last never removes one another group writes.
 */
describe('embedded index: an upsert of many vectors in groups', () => {
  it('groups whole entries, at most 256 vectors each unless one entry has more, in the order given', () => {
    const points = [...entry('ann', 0, 59), ...entry('ann', 1, 99), ...entry('ann', 2, 120), ...entry('bob', 0, 300), ...entry('ann', 3, 0)];
    // an entry's parts given apart are still written together
    const scattered = [point('cay', 0, 0), point('cay', 1, 0), point('cay', 0, 1)];
    const groups = flushGroups([{ tag, points }, { tag, points: scattered }]);
    const sizes = groups.map((g) => g.reduce((n, c) => n + c.points.length, 0));
    // an entry of 301 vectors is a group alone
    assert.deepEqual(sizes, [160, 121, 301, 1 + 3]);
    for (const g of groups) {
      const entries = g.flatMap((c) => c.points.map((p) => `${p.payload.user_id}-${p.id}`));
      for (const other of groups.filter((o) => o !== g)) for (const p of other.flatMap((c) => c.points)) assert.ok(!entries.includes(`${p.payload.user_id}-${p.id}`));
    }
    assert.deepEqual(
      groups.flat().flatMap((c) => c.points.map((p) => `${p.id}/${p.part}`)),
      [...points, point('cay', 0, 0), point('cay', 0, 1), point('cay', 1, 0)].map((p) => `${p.id}/${p.part}`),
    );
  });

  it('writes 30 entries of 60 passages in several transactions, every vector found after', async () => {
    const ix = new EmbeddedVectorIndex(openDatabase(join(tmpDir(), 'upsert-groups.db')));
    const store = (ix as unknown as { store: { upsert: (...a: unknown[]) => Promise<unknown> } }).store;
    let writes = 0;
    const upsert = store.upsert.bind(store);
    store.upsert = (...a: unknown[]) => (writes++, upsert(...a));
    // loaded first, so that the in-memory index takes each group's vectors too
    await ix.upsert(tag, [point('bob', 0, 0)]);
    await ix.search(tag, point('bob', 0, 0).vector, { user_id: 'bob' }, 1);
    writes = 0;
    const points = Array.from({ length: 30 }, (_, n) => entry('ann', n, 59)).flat();
    const counter = countTurns();
    await ix.upsert(tag, points);
    const turns = counter.stop();
    assert.ok(writes >= Math.ceil(points.length / 256), `${writes} transactions for ${points.length} vectors`);
    // a turn of the event loop before each group, a young slice's too: a connection is seen only once the loop accepted it
    assert.ok(turns >= writes, `the event loop turned ${turns} times for ${writes} transactions`);
    assert.equal(await ix.count(tag, { user_id: 'ann' }), 30);
    const found = await ix.search(tag, point('ann', 7, 0).vector, { user_id: 'ann' }, 30);
    assert.equal(found.length, 30);
  });

  it('puts a flush\'s vectors into memory an entry at a time, the event loop turning between', async () => {
    // sliceMs 0: a turn of the event loop before every vector, so the turns counted do not depend on the machine's speed
    const ix = new EmbeddedVectorIndex(openDatabase(join(tmpDir(), 'apply-slices.db')), { sliceMs: 0 });
    await ix.upsert(tag, [point('bob', 0, 0)]);
    await ix.search(tag, point('bob', 0, 0).vector, { user_id: 'bob' }, 1);
    const points = Array.from({ length: 40 }, (_, n) => entry('ann', n, 9)).flat();
    const counter = countTurns();
    await ix.upsert(tag, points);
    // a search waits for what this process wrote to be in memory
    const found = await ix.search(tag, point('ann', 7, 0).vector, { user_id: 'ann' }, 40);
    const turns = counter.stop();
    assert.ok(turns >= 40, `the event loop turned ${turns} times while 40 entries of 10 vectors were put into memory`);
    assert.equal(found.length, 40);
    // an entry written again with fewer passages: its others are gone from memory too
    await ix.upsert(tag, entry('ann', 3, 0));
    const again = await ix.search(tag, point('ann', 3, 5).vector, { user_id: 'ann' }, 400);
    assert.equal(again.length, 40);
    assert.equal(again.find((h) => h.id === 'ann-3')!.part, 0);
  });

  it('catches up with another process\'s write an entry at a time, the event loop turning between', async () => {
    const file = join(tmpDir(), 'catch-up-slices.db');
    const writer = new EmbeddedVectorIndex(openDatabase(file));
    const reader = new EmbeddedVectorIndex(openDatabase(file), { sliceMs: 0 });
    await writer.upsert(tag, [point('bob', 0, 0)]);
    await reader.search(tag, point('bob', 0, 0).vector, { user_id: 'bob' }, 1);
    await writer.upsert(tag, Array.from({ length: 40 }, (_, n) => entry('ann', n, 9)).flat());
    const counter = countTurns();
    const found = await reader.search(tag, point('ann', 7, 0).vector, { user_id: 'ann' }, 40);
    const turns = counter.stop();
    assert.ok(turns >= 40, `the event loop turned ${turns} times while 40 entries of 10 vectors were caught up with`);
    assert.equal(found.length, 40);
  });
});
