import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { collectionName } from '../../../../src/adapters/qdrant/collections.js';
import { pointId } from '../../../../src/adapters/qdrant/point-id.js';
import { QdrantUnreachableError, QdrantVectorIndex } from '../../../../src/adapters/qdrant/vector-index.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { startFakeQdrant, type FakeQdrant } from '../../../helpers/fake-qdrant.js';
import { freePort } from '../../../helpers/redis.js';

const log = pino({ level: 'silent' });
const TAG: EmbedderTag = { id: 'Xenova/all-MiniLM-L6-v2@4', dim: 4 };

function point(id: string, user: string, session: string, v: number[]): VectorPoint {
  return {
    id,
    vector: Float32Array.from(v),
    payload: { user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content: `text of ${id}`, content_hash: `h-${id}`, created_at: '2026-01-01T00:00:00.000Z' },
  };
}

describe('Qdrant point ids and collection names', () => {
  it('maps any (user, id) to the same RFC 4122 version-5 UUID every time, and different pairs to different UUIDs', () => {
    const ids = ['t1', 'T1', 'imp-abc', 'with spaces/and:colons', 'é', ''];
    const uuids = ids.map((id) => pointId('alice', id));
    for (const u of uuids) assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(ids.map((id) => pointId('alice', id)), uuids);
    assert.equal(new Set(uuids).size, ids.length);
    // ids are their user's: bob's t1 is another point, and no user/id split of the same characters collides
    assert.notEqual(pointId('bob', 't1'), pointId('alice', 't1'));
    assert.notEqual(pointId('ab', 'c'), pointId('a', 'bc'));
  });

  it('names one collection per embedder with its model id and dimension, never merging two ids', () => {
    const name = collectionName('neuralcleave', { id: 'Xenova/all-MiniLM-L6-v2@384', dim: 384 });
    assert.match(name, /^neuralcleave--Xenova_all-MiniLM-L6-v2-384d--[A-Za-z0-9_-]{8}$/);
    assert.notEqual(collectionName('nc', { id: 'a/b', dim: 8 }), collectionName('nc', { id: 'a_b', dim: 8 }));
    assert.notEqual(collectionName('nc', { id: 'hash-v1', dim: 8 }), collectionName('nc', { id: 'hash-v1', dim: 16 }));
  });
});

describe('QdrantVectorIndex against a fake Qdrant HTTP server implementing the REST subset we use', () => {
  let fake: FakeQdrant;
  before(async () => {
    fake = await startFakeQdrant({ apiKey: 'secret-key-for-tests' });
  });
  after(() => fake.stop());
  const connect = (extra: Partial<Parameters<typeof QdrantVectorIndex.connect>[0]> = {}) =>
    QdrantVectorIndex.connect({ url: fake.url, apiKey: 'secret-key-for-tests', log, ...extra });

  it('creates the embedder collection with cosine distance, keyword indexes on user_id, session_id and turn_id and an integer one on part', async () => {
    const ix = await connect({ prefix: 'create' });
    assert.equal(ix.serverVersion, '1.18.0', 'connect() read the version from GET /');
    await ix.upsert(TAG, [point('t1', 'u1', 's1', [1, 2, 3, 4])]);
    const c = fake.collections().get(ix.collectionFor(TAG));
    assert.ok(c, 'the collection exists');
    assert.equal(c.size, 4);
    assert.equal(c.distance, 'Cosine');
    assert.deepEqual(Object.fromEntries(c.payloadIndexes), { user_id: 'keyword', session_id: 'keyword', turn_id: 'keyword', part: 'integer' });
    // the point id is derived from the (user, turn id), which travel in the payload
    const stored = c.points.get(pointId('u1', 't1'));
    assert.equal(stored?.payload.turn_id, 't1');
    assert.equal(stored?.payload.user_id, 'u1');
    await ix.close();
  });

  it('creates a collection once per process, and again after another process dropped it', async () => {
    const ix = await connect({ prefix: 'recreate' });
    const creates = () => fake.requests.filter((r) => r === `PUT /collections/${ix.collectionFor(TAG)}`).length;
    await ix.upsert(TAG, [point('a', 'u', 's', [1, 0, 0, 0])]);
    await ix.upsert(TAG, [point('b', 'u', 's', [0, 1, 0, 0])]);
    assert.equal(creates(), 1);
    const other = await connect({ prefix: 'recreate' });
    await other.deleteAll(); // e.g. `memory clear --all` run elsewhere
    await ix.upsert(TAG, [point('c', 'u', 's', [0, 0, 1, 0])]);
    assert.equal(creates(), 2);
    assert.deepEqual([...(await ix.has(TAG, 'u', ['a', 'b', 'c']))], ['c']);
  });

  it('reads of an embedder that never wrote find nothing, without creating its collection', async () => {
    const ix = await connect({ prefix: 'empty' });
    const tag = { id: 'never-written', dim: 4 };
    assert.deepEqual(await ix.search(tag, Float32Array.from([1, 0, 0, 0]), { user_id: 'u' }, 5), []);
    assert.equal((await ix.has(tag, 'u', ['x'])).size, 0);
    assert.equal(await ix.count(tag), 0);
    assert.equal(fake.collections().has(ix.collectionFor(tag)), false);
  });

  it("deletes the user's points by payload: one written before ids were scoped (named by the id alone) goes too, another user's stays", async () => {
    const ix = await connect({ prefix: 'legacy' });
    await ix.upsert(TAG, [point('t9', 'u1', 's', [1, 0, 0, 0]), point('t9', 'u2', 's', [0, 1, 0, 0])]);
    const c = fake.collections().get(ix.collectionFor(TAG))!;
    // a point of an older build: its id derived from the turn id only
    c.points.set('5f0c8d8e-0000-5000-8000-000000000001', { id: '5f0c8d8e-0000-5000-8000-000000000001', vector: [0, 0, 1, 0], payload: { ...point('t9', 'u1', 's', [0, 0, 1, 0]).payload, turn_id: 't9' } });
    await ix.delete('u1', ['t9']);
    const left = [...c.points.values()].map((p) => [p.payload.user_id, p.payload.turn_id]);
    assert.deepEqual(left, [['u2', 't9']]);
    await ix.close();
  });

  it('deleteAll drops only the collections of its own prefix', async () => {
    const mine = await connect({ prefix: 'mine' });
    const theirs = await connect({ prefix: 'theirs' });
    await mine.upsert(TAG, [point('m', 'u', 's', [1, 0, 0, 0])]);
    await theirs.upsert(TAG, [point('t', 'u', 's', [1, 0, 0, 0])]);
    await mine.deleteAll();
    assert.equal(await mine.count(), 0);
    assert.equal(await theirs.count(), 1);
  });

  it('counts what deleteWhere removed across every embedder collection', async () => {
    const ix = await connect({ prefix: 'where' });
    const other = { id: 'other-model', dim: 4 };
    await ix.upsert(TAG, [point('1', 'u', 's1', [1, 0, 0, 0]), point('2', 'u', 's2', [0, 1, 0, 0]), point('3', 'v', 's1', [0, 0, 1, 0])]);
    await ix.upsert(other, [point('1', 'u', 's1', [1, 0, 0, 0])]);
    assert.equal(await ix.deleteWhere({ user_id: 'u', session_id: 's1' }), 2);
    assert.equal(await ix.count(undefined, { user_id: 'u' }), 1);
    assert.equal(await ix.count(undefined, { user_id: 'v' }), 1);
  });

  it('sends the API key: a wrong key fails to connect with a reason', async () => {
    await assert.rejects(QdrantVectorIndex.connect({ url: fake.url, apiKey: 'wrong-key-0000000', log }), (err: Error) => {
      assert.ok(err instanceof QdrantUnreachableError);
      assert.match(err.message, /401/);
      return true;
    });
  });

  it('a Qdrant that stops answering fails searches and pings at the search timeout, not the write timeout', async () => {
    const ix = await connect({ prefix: 'hang', searchTimeoutMs: 150, timeoutMs: 60_000 });
    await ix.upsert(TAG, [point('h', 'u', 's', [1, 0, 0, 0])]);
    fake.hang();
    try {
      await assert.rejects(ix.search(TAG, Float32Array.from([1, 0, 0, 0]), { user_id: 'u' }, 3));
      assert.equal(await ix.ping(), false);
    } finally {
      fake.resume();
    }
    assert.equal((await ix.search(TAG, Float32Array.from([1, 0, 0, 0]), { user_id: 'u' }, 3)).length, 1);
  });
});

describe('QdrantVectorIndex.connect', () => {
  it('rejects with QdrantUnreachableError naming the URL when nothing listens on the port', async () => {
    const port = await freePort();
    await assert.rejects(QdrantVectorIndex.connect({ url: `http://127.0.0.1:${port}`, log }), (err: Error) => {
      assert.ok(err instanceof QdrantUnreachableError);
      assert.ok(err.message.includes(`127.0.0.1:${port}`), err.message);
      return true;
    });
  });
});
