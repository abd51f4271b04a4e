import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { EmbeddedVectorIndex } from '../../../src/adapters/embedded/vector-index.js';
import { migrate } from '../../../src/adapters/postgres/migrations.js';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { PostgresVectorStore } from '../../../src/adapters/postgres/vector-store.js';
import type { EmbedderTag, VectorPoint } from '../../../src/ports/vector-index.js';
import { createDatabase, TEST_PG_SERVER, type TestDatabase } from '../../helpers/postgres.js';
import { tcpProxy } from '../../helpers/tcp-proxy.js';
import { clustered } from '../../unit/adapters/embedded/data.js';
import { sharedStoreCases } from '../../unit/adapters/embedded/shared-store.cases.js';

const made: TestDatabase[] = [];
after(async () => {
  for (const db of made) await db.drop();
});

/** a fresh database and `n` pools on it: what `n` processes on any hosts see */
async function pools(n: number): Promise<{ pools: Postgres[]; close(): Promise<void> }> {
  const db = await createDatabase();
  made.push(db);
  const pools = Array.from({ length: n }, () => new Postgres({ url: db.url, max: 4 }));
  await migrate(pools[0]!);
  return { pools, close: async () => void (await Promise.all(pools.map((p) => p.close()))) };
}

sharedStoreCases('one PostgreSQL database', async (options) => {
  const { pools: [pa, pb], close } = await pools(2);
  return {
    a: new EmbeddedVectorIndex(new PostgresVectorStore(pa!), options),
    b: new EmbeddedVectorIndex(new PostgresVectorStore(pb!), options),
    prunedThrough: async () => (await pa!.query<{ p: number }>('SELECT pruned_through AS p FROM vector_changes_state'))[0]!.p,
    close,
  };
});

const DIM = 64;
const TAG: EmbedderTag = { id: 'pg-64', dim: DIM };
const point = (id: string, vector: Float32Array, user = 'u'): VectorPoint => ({
  id,
  vector,
  payload: { user_id: user, session_id: 's', role: 'user', name: null, kind: 'turn', content: `text of ${id}`, content_hash: `h-${id}`, created_at: '2026-01-01T00:00:00.000Z' },
});

describe('embedded index over PostgreSQL', () => {
  it('three processes writing at once: every change seq commits in order, each sees every write of the others', async () => {
    const { vectors } = clustered(600, DIM, 21);
    const { pools: ps, close } = await pools(3);
    const ix = ps.map((p) => new EmbeddedVectorIndex(new PostgresVectorStore(p)));
    // every index loaded first, so each catches up from the log rather than loading what is there
    await Promise.all(ix.map((x) => x.warm(TAG)));
    // 3 × 200 upserts, each its own call, interleaved across the processes
    await Promise.all(
      ix.map((x, w) => Promise.all(Array.from({ length: 200 }, (_, i) => x.upsert(TAG, [point(`w${w}-${i}`, vectors[w * 200 + i]!)])))),
    );
    await ix[1]!.delete('u', ['w0-7', 'w2-9']);
    for (const [w, x] of ix.entries()) {
      for (const probe of [3, 250, 470]) {
        const [hit] = await x.search(TAG, vectors[probe]!, { user_id: 'u' }, 1);
        assert.equal(hit?.id, `w${Math.floor(probe / 200)}-${probe % 200}`, `process ${w} finds vector ${probe}`);
      }
      assert.equal(x.stats()[0]!.vectors, 598, `process ${w} holds every vector but the two deleted`);
      assert.ok(!(await x.search(TAG, vectors[7]!, { user_id: 'u' }, 3)).some((h) => h.id === 'w0-7'));
    }
    const [log] = await ps[0]!.query<{ n: number }>('SELECT count(*) AS n FROM vector_changes');
    assert.equal(log!.n, 602, 'one change per upsert and per delete');
    await Promise.all(ix.map((x) => x.close()));
    await close();
  });

  it('a write while the database is away rejects as unavailable; once it is back, writes and searches work and see the others\' writes', async () => {
    const { vectors } = clustered(20, DIM, 22);
    const db = await createDatabase();
    made.push(db);
    const server = new URL(TEST_PG_SERVER);
    const proxy = await tcpProxy(server.hostname, Number(server.port || 5432));
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const pg = new Postgres({ url: url.toString(), max: 2, connectTimeoutMs: 1000 });
    const direct = new Postgres({ url: db.url, max: 1 });
    try {
      await migrate(pg);
      const ix = new EmbeddedVectorIndex(new PostgresVectorStore(pg));
      const other = new EmbeddedVectorIndex(new PostgresVectorStore(direct));
      await ix.upsert(TAG, [point('before', vectors[0]!)]);
      assert.equal((await ix.search(TAG, vectors[0]!, { user_id: 'u' }, 1))[0]?.id, 'before');
      await proxy.stop();
      await assert.rejects(ix.upsert(TAG, [point('refused', vectors[1]!)]), (e: Error) => e.name === 'BackendUnavailableError');
      await assert.rejects(ix.search(TAG, vectors[0]!, { user_id: 'u' }, 1), (e: Error) => e.name === 'BackendUnavailableError');
      await other.upsert(TAG, [point('meanwhile', vectors[2]!)]);
      await proxy.start();
      await ix.upsert(TAG, [point('after', vectors[3]!)]);
      assert.equal((await ix.search(TAG, vectors[2]!, { user_id: 'u' }, 1))[0]?.id, 'meanwhile', "another process's write while this one was cut off");
      assert.equal((await ix.search(TAG, vectors[3]!, { user_id: 'u' }, 1))[0]?.id, 'after');
      assert.deepEqual([...(await ix.has(TAG, 'u', ['before', 'refused', 'meanwhile', 'after']))].sort(), ['after', 'before', 'meanwhile'], 'the refused write left nothing');
    } finally {
      await Promise.all([pg.close(), direct.close()]);
      await proxy.close();
    }
  });
});
