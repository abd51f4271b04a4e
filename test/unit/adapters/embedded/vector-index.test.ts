import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { clustered, exactTop } from './data.js';

const DIM = 384;
const TAG: EmbedderTag = { id: 'test-384', dim: DIM };
const dir = tmpDir();
let files = 0;

function point(id: string, vector: Float32Array, user = 'u', session = 's'): VectorPoint {
  return {
    id,
    vector,
    payload: { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content: `text of ${id}`, content_hash: `h-${id}`, created_at: '2026-01-01T00:00:00.000Z' },
  };
}

/** two connections to one file: what two processes sharing it see */
function twoProcesses(options = {}): { file: string; dbs: Db[]; a: EmbeddedVectorIndex; b: EmbeddedVectorIndex } {
  const file = join(dir, `v${files++}.db`);
  const dbs = [openDatabase(file), openDatabase(file)];
  return { file, dbs, a: new EmbeddedVectorIndex(dbs[0]!, options), b: new EmbeddedVectorIndex(dbs[1]!, options) };
}

const ids = async (ix: EmbeddedVectorIndex, q: Float32Array, k: number, user = 'u', session?: string) =>
  (await ix.search(TAG, q, { user_id: user, ...(session ? { session_id: session } : {}) }, k)).map((h) => h.id);

describe('EmbeddedVectorIndex', () => {
  it('returns the exact top k (recall@8 against an exact scan) with exact cosine scores', async () => {
    const { vectors, near } = clustered(4000, DIM, 11);
    const file = join(dir, `v${files++}.db`);
    const db = openDatabase(file);
    const ix = new EmbeddedVectorIndex(db);
    await ix.upsert(TAG, vectors.map((v, i) => point(`p${i}`, v, i % 4 === 0 ? 'other' : 'u')));
    let hit = 0;
    for (let t = 0; t < 40; t++) {
      const q = near(t * 97 + 1);
      const want = exactTop(vectors, q, 8, (i) => i % 4 !== 0).map((i) => `p${i}`);
      const hits = await ix.search(TAG, q, { user_id: 'u' }, 8);
      hit += hits.filter((h) => want.includes(h.id)).length;
      const i = Number(hits[0]!.id.slice(1));
      let dot = 0;
      for (let j = 0; j < DIM; j++) dot += vectors[i]![j]! * q[j]!;
      assert.ok(Math.abs(hits[0]!.score - dot) < 1e-5, 'the score is the exact cosine');
      assert.equal(hits[0]!.payload.content, `text of p${i}`);
    }
    assert.ok(hit / 320 >= 0.99, `recall@8 ${hit / 320}`);
    db.close();
  });

  it('sees vectors another process upserts and deletes, without reloading', async () => {
    const { vectors } = clustered(300, DIM, 12);
    const { dbs, a, b } = twoProcesses();
    await a.upsert(TAG, vectors.slice(0, 100).map((v, i) => point(`p${i}`, v)));
    assert.deepEqual(await ids(b, vectors[5]!, 1), ['p5']); // b loads here
    const loadedB = b.stats()[0]!;
    await a.upsert(TAG, vectors.slice(100, 200).map((v, i) => point(`p${100 + i}`, v)));
    assert.deepEqual(await ids(b, vectors[150]!, 1), ['p150']);
    await a.delete('u', ['p150']);
    assert.ok(!(await ids(b, vectors[150]!, 5)).includes('p150'));
    await a.upsert(TAG, [point('p5', vectors[250]!)]); // replaced: p5 now holds another vector
    assert.deepEqual(await ids(b, vectors[250]!, 1), ['p5']);
    await a.deleteWhere({ user_id: 'u', session_id: 's' });
    assert.deepEqual(await ids(b, vectors[7]!, 5), []);
    assert.equal(b.stats()[0]!.vectors, 0);
    assert.ok(loadedB.vectors === 100);
    // and the other way round: a, loaded, sees b's writes
    assert.deepEqual(await ids(a, vectors[1]!, 1), []);
    await b.upsert(TAG, [point('q1', vectors[1]!)]);
    assert.deepEqual(await ids(a, vectors[1]!, 1), ['q1']);
    dbs.forEach((d) => d.close());
  });

  it('catches up by reloading when the change log was pruned past it', async () => {
    const { vectors } = clustered(400, DIM, 13);
    const { dbs, a, b } = twoProcesses({ retainChanges: 10 });
    await a.upsert(TAG, [point('p0', vectors[0]!)]);
    assert.deepEqual(await ids(b, vectors[0]!, 1), ['p0']);
    for (let i = 1; i < 400; i += 50) await a.upsert(TAG, vectors.slice(i, i + 50).map((v, j) => point(`p${i + j}`, v)));
    await a.delete('u', ['p0']);
    const pruned = dbs[0]!.prepare('SELECT pruned_through FROM vector_changes_state').pluck().get() as number;
    assert.ok(pruned > 1, 'the log was pruned past what b saw');
    assert.deepEqual(await ids(b, vectors[333]!, 1), ['p333']);
    assert.ok(!(await ids(b, vectors[0]!, 3)).includes('p0'));
    assert.equal(b.stats()[0]!.vectors, 399);
    dbs.forEach((d) => d.close());
  });

  it('stays exact when its own writes were pruned from the log before it read them', async () => {
    const { vectors } = clustered(300, DIM, 17);
    const { dbs, a, b } = twoProcesses({ retainChanges: 5 });
    await a.upsert(TAG, [point('p0', vectors[0]!)]);
    assert.deepEqual(await ids(a, vectors[0]!, 1), ['p0']); // a loads
    for (let i = 1; i < 200; i += 20) await a.upsert(TAG, vectors.slice(i, i + 20).map((v, j) => point(`p${i + j}`, v)));
    await b.upsert(TAG, [point('from-b', vectors[250]!)]);
    await a.delete('u', ['p7']);
    assert.deepEqual(await ids(a, vectors[250]!, 1), ['from-b']);
    assert.deepEqual(await ids(a, vectors[123]!, 1), ['p123']);
    assert.ok(!(await ids(a, vectors[7]!, 3)).includes('p7'));
    assert.equal(a.stats()[0]!.vectors, 201); // p0…p200 and from-b, less p7
    dbs.forEach((d) => d.close());
  });

  it('keeps embedders apart and filters by session', async () => {
    const { vectors } = clustered(200, DIM, 14);
    const other: EmbedderTag = { id: 'other-384', dim: DIM };
    const { dbs, a, b } = twoProcesses();
    await a.upsert(TAG, vectors.slice(0, 100).map((v, i) => point(`p${i}`, v, 'u', `s${i % 4}`)));
    await a.upsert(other, [point('x', vectors[3]!)]);
    assert.deepEqual(await ids(b, vectors[3]!, 1), ['p3']);
    assert.deepEqual((await b.search(other, vectors[3]!, { user_id: 'u' }, 5)).map((h) => h.id), ['x']);
    const inSession = await ids(b, vectors[3]!, 10, 'u', 's3');
    assert.equal(inSession.length, 10);
    assert.ok(inSession.every((id) => Number(id.slice(1)) % 4 === 3));
    assert.deepEqual(await ids(b, vectors[3]!, 5, 'u', 'nope'), []);
    await assert.rejects(b.search(TAG, new Float32Array(8), { user_id: 'u' }, 5), /dimensions/);
    dbs.forEach((d) => d.close());
  });

  it('survives a restart: a new process on the same file finds the same vectors', async () => {
    const { vectors, near } = clustered(500, DIM, 15);
    const file = join(dir, `v${files++}.db`);
    let db = openDatabase(file);
    let ix = new EmbeddedVectorIndex(db);
    await ix.upsert(TAG, vectors.map((v, i) => point(`p${i}`, v)));
    const q = near(42);
    const before = await ix.search(TAG, q, { user_id: 'u' }, 8);
    await ix.close();
    db.close();
    db = openDatabase(file);
    ix = new EmbeddedVectorIndex(db);
    assert.deepEqual(ix.stats(), [], 'nothing in memory before the first search');
    await ix.warm(TAG);
    assert.equal(ix.stats()[0]!.vectors, 500);
    assert.deepEqual(await ix.search(TAG, q, { user_id: 'u' }, 8), before);
    db.close();
  });

  it('commits concurrent upserts together, and fails only the bad one', async () => {
    const { vectors } = clustered(50, DIM, 16);
    const file = join(dir, `v${files++}.db`);
    const db = openDatabase(file);
    const ix = new EmbeddedVectorIndex(db);
    const head = () => db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'").pluck().get() as number | undefined;
    const bad = point('bad', vectors[0]!);
    (bad.payload as { content: unknown }).content = Buffer.from('x'); // a STRICT table refuses a blob here
    const results = await Promise.allSettled([...vectors.map((v, i) => ix.upsert(TAG, [point(`p${i}`, v)])), ix.upsert(TAG, [bad])]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 50);
    assert.equal(results[50]!.status, 'rejected');
    assert.equal(await ix.count(TAG), 50);
    assert.equal(head(), 50);
    db.close();
  });
});
