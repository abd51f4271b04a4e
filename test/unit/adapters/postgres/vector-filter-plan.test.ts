import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesFilter } from '../../../../src/domain/filters.js';
import { PostgresVectorStore } from '../../../../src/adapters/postgres/vector-store.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { FILTER_RECORDS, PLAN_FILTER_CASES } from '../../../contract/filter-cases.js';
import { readsOf } from '../../../helpers/pg-plan.js';
import { sharedPostgres } from '../../../helpers/postgres.js';

const database = sharedPostgres();
const TAG = { id: 'plan-test', dim: 128 } as EmbedderTag;

/**
 * A filtered search of the embedded index over PostgreSQL first lists the user's vectors the filter
 * allows (`matching`); the unfiltered one reads no row at all (the codes are in memory). That list
 * must cost about what the cheapest read of the user's vectors costs — counting them — and never
 * read another user's: with the (embedder, user_id) index alone it read every row of the user (the
 * vector and the text, a few rows a page: 27 times the buffers on RealMem), or the whole table.
 * The user holds a fifth of the table, written interleaved with the other user's rows. Metadata
 * conditions need the rows themselves (a jsonb of up to 8 KiB does not fit an index entry): bounded
 * by a page per row of the user.
 */
describe('PostgreSQL vector store: the rows a filter allows are read from an index', () => {
  it('every filter kind but metadata reads the user\'s index entries only, about the buffers of a count of them', async () => {
    const pg = await database();
    await pg.run('ALTER TABLE vectors SET (autovacuum_enabled = false)');
    const store = new PostgresVectorStore(pg);
    const sizes = { big: 2000, other: 8000 };
    const points: VectorPoint[] = [];
    const written = { big: 0, other: 0 };
    // written over time, as a service writes them: one row in five is the user's
    for (let j = 0; j < sizes.big + sizes.other; j++) {
      const user = j % 5 === 0 ? 'big' : 'other';
      const i = written[user]++;
      const r = FILTER_RECORDS[i % FILTER_RECORDS.length]!;
      const content = `turn ${i} of ${user}: ${'a sentence of a real length, about the weather and the errands of the day. '.repeat(5)}`;
      const vector = Float32Array.from({ length: TAG.dim }, (_, d) => Math.sin(i * 31 + d));
      points.push({
        id: `v${i}`, vector,
        payload: { user_id: user, session_id: r.session_id, role: r.role, name: null, kind: r.kind, content, content_hash: contentHash(content), created_at: r.created_at, metadata: r.metadata },
      });
    }
    for (let i = 0; i < points.length; i += 1000) await store.upsert([{ tag: TAG, points: points.slice(i, i + 1000) }], 1_000_000);

    const sent: Array<{ sql: string; values: readonly unknown[] }> = [];
    const query = pg.query.bind(pg);
    for (const state of ['not vacuumed', 'vacuumed']) {
      if (state === 'vacuumed') await pg.run('VACUUM ANALYZE vectors');
      const count = await readsOf(pg, 'vectors', 'SELECT count(*) FROM vectors WHERE embedder = $1 AND user_id = $2', [TAG.id, 'big']);
      for (const c of PLAN_FILTER_CASES) {
        sent.length = 0;
        pg.query = (async (sql: string, values?: readonly unknown[]) => (sent.push({ sql, values: values ?? [] }), query(sql, values))) as typeof pg.query;
        let allowed: Set<number>;
        try {
          allowed = await store.matching(TAG, 'big', c.filter);
        } finally {
          pg.query = query;
        }
        assert.equal(allowed.size, points.filter((p) => p.payload.user_id === 'big' && matchesFilter(p.payload, c.filter)).length, `${state}, ${c.name}: allowed`);
        assert.equal(sent.length, 1, 'one statement');
        const reads = await readsOf(pg, 'vectors', sent[0]!.sql, sent[0]!.values);
        const seen = `${state}, ${c.name}: ${reads.rows} rows, ${reads.buffers} buffers (${reads.plan.join(', ')}); count ${count.rows} rows, ${count.buffers} buffers (${count.plan.join(', ')})`;
        if (c.filter.metadata) {
          // metadata is in the rows only: at most a page for each of the user's rows (or the whole
          // table, read in order, where the user's rows are on every page of it)
          assert.ok(reads.buffers <= count.buffers + sizes.big + 10, seen);
        } else {
          assert.ok(reads.rows <= sizes.big + 10, seen);
          assert.ok(reads.buffers <= 2 * count.buffers + 10, seen);
        }
      }
    }
  });
});
