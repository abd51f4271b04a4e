import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { matchesFilter } from '../../../../src/domain/filters.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { FILTER_RECORDS, PLAN_FILTER_CASES } from '../../../contract/filter-cases.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

const DIM = 8;
const TAG: EmbedderTag = { id: 'plan-8', dim: DIM };

/**
 * A filtered semantic search first lists the user's vectors the filter allows (VectorRows.matching).
 * That list must come from an index alone: read from the rows, it read each of the user's vectors
 * whole, text and vector (RealMem, ~1,300 vectors a user: 4-5 ms for any filter, 0.5 ms for the
 * rowids alone). A time is not listed: the index tests it on each row it holds. Each filter kind
 * alone and all at once; the answers are checked against the filter.
 */
describe('embedded index: a filtered search lists the allowed vectors from an index', () => {
  it('every filter kind reads a covering index of the user, never the rows', async () => {
    const db = openDatabase(join(tmpDir(), 'plan.db'));
    const ix = new EmbeddedVectorIndex(db);
    const points: VectorPoint[] = [];
    for (let i = 0; i < 600; i++) {
      const r = FILTER_RECORDS[i % FILTER_RECORDS.length]!;
      const vector = Float32Array.from({ length: DIM }, (_, j) => Math.sin(i * 7 + j) + 1.5);
      const user = i % 5 === 0 ? 'other' : 'u';
      points.push({
        id: `p${i}`,
        vector,
        payload: { user_id: user, session_id: r.session_id, role: r.role, name: null, kind: r.kind, content: `a long text ${'of words '.repeat(100)}${i}`, content_hash: `h${i}`, created_at: r.created_at, metadata: r.metadata },
      });
    }
    await ix.upsert(TAG, points);
    db.exec('ANALYZE');

    const prepared = recordPrepared(db);

    for (const c of PLAN_FILTER_CASES) {
      prepared.length = 0;
      // an index of its own for each search: two cases with the same conditions (kinds: summary, kinds:
      // turn) would share one prepared statement, and the second would prepare nothing to look at
      const hits = await new EmbeddedVectorIndex(db).search(TAG, points[1]!.vector, { user_id: 'u', where: c.filter }, 1000);
      const want = points.filter((p) => p.payload.user_id === 'u' && matchesFilter({ ...p.payload, metadata: p.payload.metadata ?? null }, c.filter)).map((p) => p.id).sort();
      assert.deepEqual(hits.map((h) => h.id).sort(), want, `${c.name}: the vectors the filter allows`);
      const listing = prepared.filter((sql) => /^SELECT rowid FROM vectors WHERE/.test(sql));
      // a time alone is tested on the rows held in memory (each query names its own): nothing is listed
      if (Object.keys(c.filter).every((k) => k === 'created_after' || k === 'created_before')) {
        assert.deepEqual(listing, [], `${c.name}: nothing listed for a time`);
        continue;
      }
      assert.equal(listing.length, 1, `${c.name}: one statement lists the allowed vectors (${JSON.stringify(prepared)})`);
      const sql = listing[0]!;
      const plan = planOf(db, sql);
      const loops = plan.filter((d) => /^(SCAN|SEARCH) /.test(d));
      assert.equal(loops.length, 1, `${c.name}: ${JSON.stringify(plan)}`);
      assert.match(loops[0]!, /^SEARCH vectors USING COVERING INDEX \w+ \(embedder=\? AND user_id=\?/, `${c.name}: ${JSON.stringify(plan)}`);
    }
    db.close();
  });
});
