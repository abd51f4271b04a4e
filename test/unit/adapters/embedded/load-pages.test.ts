import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import type { VectorPoint } from '../../../../src/ports/vector-index.js';
import { planOf, recordRun } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { countTurns } from '../../../helpers/loop-turns.js';

const DIM = 32;
const tag = { id: 'load-32', dim: DIM };

/** a unit vector from a seed (a linear congruential sequence), and the point holding it */
function point(user: string, i: number, session = `s${i % 7}`): VectorPoint {
  const v = new Float32Array(DIM);
  let x = (i + 1) * 2_654_435_761;
  for (let d = 0; d < DIM; d++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    v[d] = x / 1_073_741_824 - 1;
  }
  const norm = Math.hypot(...v);
  for (let d = 0; d < DIM; d++) v[d]! /= norm;
  return { id: `${user}-${i}`, vector: v, payload: { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content: `turn ${i}`, content_hash: `h${i}`, created_at: '2026-01-01T00:00:00.000Z', metadata: null } };
}

/**
 * A process's first search loads every vector of the embedder into memory. Read in one pass, 100k
 * vectors held the event loop ~2 s, every request waiting; now a page of rows at a time, in the
 * process's slices of work (src/pace.ts). Each page must be read through the rowid's b-tree from where
 * the last ended: through the (embedder, …) index each page read every row of the embedder and sorted
 * them. 20,000 rows take far more than a slice of 10 ms to load on any machine; the turns are counted,
 * not timed.
 */
describe('embedded index on SQLite: the load in pages', () => {
  it('loads a page at a time by rowid, giving the event loop a turn after each, and finds what one pass found', async () => {
    const file = join(tmpDir(), 'load.db');
    const writer = new EmbeddedVectorIndex(openDatabase(file));
    const rows = 20_000;
    for (let i = 0; i < rows; i += 2_000) await writer.upsert(tag, Array.from({ length: 2_000 }, (_, j) => point(j % 2 ? 'ann' : 'bob', i + j)));

    const db = openDatabase(file);
    const ran = recordRun(db);
    const fresh = new EmbeddedVectorIndex(db);
    const counter = countTurns();
    const hits = await fresh.search(tag, point('ann', 4_321).vector, { user_id: 'ann' }, 3);
    const ticks = counter.stop();

    assert.equal(hits[0]!.id, 'ann-4321');
    const pages = ran.filter((sql) => /FROM vectors WHERE rowid > @after/.test(sql));
    assert.ok(pages.length >= rows / 256, `the load read ${pages.length} pages of ${rows} rows`);
    assert.deepEqual(planOf(db, pages[0]!), ['SEARCH vectors USING INTEGER PRIMARY KEY (rowid>?)']);
    // a turn after every page, a young slice's too: a connection is accepted (and then paused for)
    // only in a turn of the loop, and a fresh process's /health waited behind two slices of pages
    assert.ok(ticks >= pages.length, `the event loop turned ${ticks} times while ${pages.length} pages of vectors were loaded`);
  });

  it("counts each user's vectors a page of sessions at a time, each page a range of the index", async () => {
    const file = join(tmpDir(), 'load-counts.db');
    const writer = new EmbeddedVectorIndex(openDatabase(file));
    // 1,300 sessions: one user's count spans pages (counted in one statement grouped by user, 100k
    // vectors of one user held the event loop 56 ms cold)
    const users = { ann: 2_600, bob: 1_300, cy: 1 };
    for (const [user, n] of Object.entries(users)) {
      for (let i = 0; i < n; i += 1_000) await writer.upsert(tag, Array.from({ length: Math.min(1_000, n - i) }, (_, j) => point(user, i + j, `${user}-s${Math.floor((i + j) / 3)}`)));
    }

    const db = openDatabase(file);
    const ran = recordRun(db);
    const fresh = new EmbeddedVectorIndex(db);
    assert.equal((await fresh.search(tag, point('bob', 1_234).vector, { user_id: 'bob' }, 1))[0]!.id, 'bob-1234');
    const counts = ran.filter((sql) => /\bcount\(\*\)/.test(sql) && /GROUP BY/.test(sql));
    assert.ok(counts.length >= 3, `${counts.length} statements counted ${Object.keys(users).length} users' vectors over 1,301 sessions`);
    for (const sql of new Set(counts)) assert.deepEqual(planOf(db, sql), ['SEARCH vectors USING COVERING INDEX vectors_filter (embedder=? AND (user_id,session_id)>(?,?))']);
    // every vector held, each user's own
    const [stats] = fresh.stats();
    assert.equal(stats!.vectors, 2_600 + 1_300 + 1);
    for (const [user, n] of Object.entries(users)) assert.equal((await fresh.search(tag, point(user, n - 1).vector, { user_id: user }, 1))[0]!.id, `${user}-${n - 1}`);
  });
});
