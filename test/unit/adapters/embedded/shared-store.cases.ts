import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EmbeddedVectorIndex, EmbeddedVectorIndexOptions } from '../../../../src/adapters/embedded/vector-index.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { clustered } from './data.js';

const DIM = 384;
const TAG: EmbedderTag = { id: 'test-384', dim: DIM };

function point(id: string, vector: Float32Array, user = 'u', session = 's'): VectorPoint {
  return {
    id,
    vector,
    payload: { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content: `text of ${id}`, content_hash: `h-${id}`, created_at: '2026-01-01T00:00:00.000Z' },
  };
}

const ids = async (ix: EmbeddedVectorIndex, q: Float32Array, k: number, user = 'u', session?: string) =>
  (await ix.search(TAG, q, { user_id: user, ...(session ? { session_id: session } : {}) }, k)).map((h) => h.id);

/** Two indexes over one store, as two processes (on one host, or two) see it; each call a fresh store. */
export type OpenShared = (options: EmbeddedVectorIndexOptions) => Promise<{
  a: EmbeddedVectorIndex;
  b: EmbeddedVectorIndex;
  /** the change log's pruned_through */
  prunedThrough(): Promise<number>;
  close(): Promise<void>;
}>;

/** What every process sharing a vector store sees of the others' writes, on any store. */
export function sharedStoreCases(name: string, open: OpenShared): void {
  describe(`EmbeddedVectorIndex: two processes sharing ${name}`, () => {
    it('sees vectors another process upserts and deletes, without reloading', async () => {
      const { vectors } = clustered(300, DIM, 12);
      const { a, b, close } = await open({});
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
      await close();
    });

    it("sees another process's passages of a long turn, their trim when the text gets short and their delete", async () => {
      const { vectors } = clustered(40, DIM, 14);
      const { a, b, close } = await open({});
      await a.upsert(TAG, [point('other', vectors[30]!)]);
      assert.deepEqual(await ids(b, vectors[30]!, 1), ['other']); // b loads here
      const parts = (id: string, from: number, n: number) => Array.from({ length: n }, (_, part) => ({ ...point(id, vectors[from + part]!), part }));
      await a.upsert(TAG, parts('long', 0, 6));
      const hit = (await b.search(TAG, vectors[4]!, { user_id: 'u' }, 1))[0]!;
      assert.deepEqual([hit.id, hit.part, hit.payload.content], ['long', 4, 'text of long']);
      assert.equal(b.stats()[0]!.vectors, 7);
      await a.upsert(TAG, parts('long', 0, 2)); // edited to a shorter text: parts 2-5 go
      const after = (await b.search(TAG, vectors[4]!, { user_id: 'u' }, 2)).find((h) => h.id === 'long');
      assert.ok(!after || after.part <= 1, `part ${after?.part}`);
      assert.equal(b.stats()[0]!.vectors, 3);
      await a.delete('u', ['long']);
      assert.deepEqual(await ids(b, vectors[1]!, 5), ['other']);
      assert.equal(b.stats()[0]!.vectors, 1);
      await close();
    });

    it('catches up by reloading when the change log was pruned past it', async () => {
      const { vectors } = clustered(400, DIM, 13);
      const { a, b, close, prunedThrough } = await open({ retainChanges: 10 });
      await a.upsert(TAG, [point('p0', vectors[0]!)]);
      assert.deepEqual(await ids(b, vectors[0]!, 1), ['p0']);
      for (let i = 1; i < 400; i += 50) await a.upsert(TAG, vectors.slice(i, i + 50).map((v, j) => point(`p${i + j}`, v)));
      await a.delete('u', ['p0']);
      const pruned = await prunedThrough();
      assert.ok(pruned > 1, 'the log was pruned past what b saw');
      assert.deepEqual(await ids(b, vectors[333]!, 1), ['p333']);
      assert.ok(!(await ids(b, vectors[0]!, 3)).includes('p0'));
      assert.equal(b.stats()[0]!.vectors, 399);
      await close();
    });

    it('stays exact when its own writes were pruned from the log before it read them', async () => {
      const { vectors } = clustered(300, DIM, 17);
      const { a, b, close } = await open({ retainChanges: 5 });
      await a.upsert(TAG, [point('p0', vectors[0]!)]);
      assert.deepEqual(await ids(a, vectors[0]!, 1), ['p0']); // a loads
      for (let i = 1; i < 200; i += 20) await a.upsert(TAG, vectors.slice(i, i + 20).map((v, j) => point(`p${i + j}`, v)));
      await b.upsert(TAG, [point('from-b', vectors[250]!)]);
      await a.delete('u', ['p7']);
      assert.deepEqual(await ids(a, vectors[250]!, 1), ['from-b']);
      assert.deepEqual(await ids(a, vectors[123]!, 1), ['p123']);
      assert.ok(!(await ids(a, vectors[7]!, 3)).includes('p7'));
      assert.equal(a.stats()[0]!.vectors, 201); // p0…p200 and from-b, less p7
      await close();
    });

    it('keeps embedders apart and filters by session', async () => {
      const { vectors } = clustered(200, DIM, 14);
      const other: EmbedderTag = { id: 'other-384', dim: DIM };
      const { a, b, close } = await open({});
      await a.upsert(TAG, vectors.slice(0, 100).map((v, i) => point(`p${i}`, v, 'u', `s${i % 4}`)));
      await a.upsert(other, [point('x', vectors[3]!)]);
      assert.deepEqual(await ids(b, vectors[3]!, 1), ['p3']);
      assert.deepEqual((await b.search(other, vectors[3]!, { user_id: 'u' }, 5)).map((h) => h.id), ['x']);
      const inSession = await ids(b, vectors[3]!, 10, 'u', 's3');
      assert.equal(inSession.length, 10);
      assert.ok(inSession.every((id) => Number(id.slice(1)) % 4 === 3));
      assert.deepEqual(await ids(b, vectors[3]!, 5, 'u', 'nope'), []);
      await assert.rejects(b.search(TAG, new Float32Array(8), { user_id: 'u' }, 5), /dimensions/);
      await close();
    });
  });
}
