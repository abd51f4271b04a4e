import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import type { VectorPoint } from '../../../../src/ports/vector-index.js';
import { countTurns } from '../../../helpers/loop-turns.js';
import { tmpDir } from '../../../helpers/tmp.js';

const DIM = 8;
const tag = { id: 'delete-8', dim: DIM };

function point(user: string, i: number, session = 's'): VectorPoint {
  const v = Float32Array.from({ length: DIM }, (_, d) => (d === i % DIM ? 1 : 0.1));
  return { id: `${user}-${i}`, vector: v, payload: { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content: `turn ${i}`, content_hash: `h${i}`, created_at: '2026-01-01T00:00:00.000Z', metadata: null } };
}

/**
 * A forget or clear deletes a user's (or session's) vectors a transaction of 512 rows at a time, and a
 * delete by ids 256 ids at a time, in the process's slices of work: in one transaction a forget of a
 * user of 30,000 turns held the event loop ~1 s (its rows, then its ids again). Counted here by the
 * statements run; what is left, by count and search.
 */
describe('embedded index on SQLite: deletes in transactions of bounded size', () => {
  it('deletes a user, a session and a list of ids in several writes, leaving nothing of them and all of the others', async () => {
    const ix = new EmbeddedVectorIndex(openDatabase(join(tmpDir(), 'delete-chunks.db')));
    // each call of the store's delete is one transaction (VectorStore's contract)
    const store = (ix as unknown as { store: Record<'delete' | 'deleteWhere', (...a: unknown[]) => Promise<unknown>> }).store;
    const writes = { delete: 0, deleteWhere: 0 };
    for (const m of ['delete', 'deleteWhere'] as const) {
      const f = store[m].bind(store);
      store[m] = (...a: unknown[]) => (writes[m]++, f(...a));
    }
    await ix.upsert(tag, Array.from({ length: 1_300 }, (_, i) => point('ann', i)));
    await ix.upsert(tag, Array.from({ length: 600 }, (_, i) => point('ann', 2_000 + i, 's2')));
    await ix.upsert(tag, Array.from({ length: 700 }, (_, i) => point('cay', i)));
    await ix.upsert(tag, Array.from({ length: 20 }, (_, i) => point('bob', i)));
    // loaded, so that the in-memory index is updated too
    assert.equal((await ix.search(tag, point('ann', 3).vector, { user_id: 'ann' }, 1))[0]!.id, 'ann-3');

    assert.equal(await ix.deleteWhere({ user_id: 'ann', session_id: 's2' }), 600);
    assert.equal(writes.deleteWhere, 2, 'a session of 600 rows: two transactions of at most 512');
    // a turn of the event loop between the transactions, a young slice's too: a connection is seen only once the loop accepted it
    let counter = countTurns();
    assert.equal(await ix.deleteWhere({ user_id: 'ann' }), 1_300);
    assert.equal(writes.deleteWhere, 2 + 3, 'a user of 1,300 rows: three');
    assert.ok(counter.stop() >= 2, 'a turn between each two of them');
    counter = countTurns();
    await ix.delete('cay', Array.from({ length: 700 }, (_, i) => `cay-${i}`));
    assert.equal(writes.delete, 3, '700 ids: three transactions of at most 256');
    assert.ok(counter.stop() >= 2, 'a turn between each two of them');
    assert.equal(await ix.count(undefined, { user_id: 'cay' }), 0);

    assert.equal(await ix.count(undefined, { user_id: 'ann' }), 0);
    assert.deepEqual(await ix.search(tag, point('ann', 3).vector, { user_id: 'ann' }, 5), []);
    assert.equal(await ix.count(undefined, { user_id: 'bob' }), 20);
    assert.equal((await ix.search(tag, point('bob', 3).vector, { user_id: 'bob' }, 1))[0]!.id, 'bob-3');
  });
});
