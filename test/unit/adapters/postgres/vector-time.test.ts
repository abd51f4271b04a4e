import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { PostgresVectorStore } from '../../../../src/adapters/postgres/vector-store.js';
import { RetrieveFiltersSchema, type RecordFilterInput } from '../../../../src/domain/filters.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { sharedPostgres } from '../../../helpers/postgres.js';

const database = sharedPostgres();
const TAG: EmbedderTag = { id: 'time-test', dim: 8 };
const T0 = Date.UTC(2026, 0, 1);
const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();

/**
 * The embedded index tests a filter's time on each row it holds (its created_at, kept beside the
 * row): over PostgreSQL that time comes from the load's and the catch-up's reads of `timestamptz`
 * (extract(epoch) in milliseconds), and must be the time written, to the millisecond.
 */
describe('embedded index over PostgreSQL: the time a filter tests', () => {
  it('is the written time, through the load and through another process\'s write', async () => {
    const pg = await database();
    const user = `time-${process.pid}-${Date.now()}`;
    const points: VectorPoint[] = Array.from({ length: 200 }, (_, i) => ({
      id: `t${i}`,
      vector: Float32Array.from({ length: TAG.dim }, (_, d) => Math.sin(i * 7 + d) + 1.5),
      // a millisecond apart at the edges: a time rounded to the second would let t0..t2 through
      payload: { user_id: user, session_id: `s${i % 4}`, role: 'user', name: null, kind: 'turn', content: `turn ${i}`, content_hash: `h${i}`, created_at: new Date(T0 + i * 60_000 + (i % 3)).toISOString(), metadata: null },
    }));
    await new EmbeddedVectorIndex(new PostgresVectorStore(pg)).upsert(TAG, points);
    // a new index: every row comes through the load
    const a = new EmbeddedVectorIndex(new PostgresVectorStore(pg));
    const allowed = async (input: RecordFilterInput) =>
      new Set((await a.search(TAG, points[50]!.vector, { user_id: user, where: RetrieveFiltersSchema.parse(input) }, 1000)).map((h) => h.id));
    const want = (keep: (p: VectorPoint) => boolean) => new Set(points.filter(keep).map((p) => p.id));
    for (const edge of [at(20), new Date(T0 + 20 * 60_000 + 1).toISOString(), new Date(T0 + 20 * 60_000 + 2).toISOString(), at(150)]) {
      assert.deepEqual(await allowed({ created_before: edge }), want((p) => p.payload.created_at < edge), `before ${edge}`);
      assert.deepEqual(await allowed({ created_after: edge }), want((p) => p.payload.created_at >= edge), `from ${edge}`);
    }
    // another process re-dates t10 after everything else: the catch-up re-reads it
    const b = new EmbeddedVectorIndex(new PostgresVectorStore(pg));
    await b.upsert(TAG, [{ ...points[10]!, payload: { ...points[10]!.payload, created_at: at(9000) } }]);
    assert.ok(!(await allowed({ created_before: at(150) })).has('t10'), 'its old time no longer holds');
    assert.deepEqual(await allowed({ created_after: at(8000) }), new Set(['t10']), 'its new time does');
    await Promise.all([a.close(), b.close()]);
  });
});
