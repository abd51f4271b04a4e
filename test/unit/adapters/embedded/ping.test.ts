import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { planOf, recordRun } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * GET /health pings the vector index, keyless probes included (load balancers call it every few
 * seconds). The embedded index's ping on the SQLite file must not read the vectors: it counted a
 * user's vectors with a statement no index narrows (`@u IS NULL OR user_id = @u`), a walk of every row,
 * text and vector — 249 ms of CPU a probe on RealMem and LoCoMo dev's 7,128 turns, the event loop held
 * as long. Its plan must only search an index.
 */
describe('embedded index on SQLite: ping', () => {
  it('reads an index, never a walk of the vectors', async () => {
    const db = openDatabase(join(tmpDir(), 'ping.db'));
    const ran = recordRun(db);
    const ix = new EmbeddedVectorIndex(db);
    await ix.upsert({ id: 'ping-4', dim: 4 }, [
      { id: 'a', vector: Float32Array.from([1, 0, 0, 0]), payload: { user_id: 'u', session_id: 's', role: 'user', name: null, kind: 'turn', content: 'text', content_hash: 'h', created_at: '2026-01-01T00:00:00.000Z', metadata: null } },
    ]);
    ran.length = 0;
    assert.equal(await ix.ping(), true);
    assert.ok(ran.length > 0, 'the ping ran a statement');
    for (const sql of ran) {
      const plan = planOf(db, sql);
      assert.ok(!plan.some((d) => /^SCAN vectors\b/.test(d)), `${sql}: ${JSON.stringify(plan)}`);
    }
  });
});
