import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { scanThread } from '../../../../src/adapters/embedded/scan-thread.js';
import { EmbeddedVectorIndex } from '../../../../src/adapters/embedded/vector-index.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import type { EmbedderTag, VectorPoint } from '../../../../src/ports/vector-index.js';
import { withBudget } from '../../../../src/retrieval/budget.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { clustered, exactTop } from './data.js';
import { sharedStoreCases } from './shared-store.cases.js';

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

sharedStoreCases('the SQLite file', async (options) => {
  const file = join(dir, `v${files++}.db`);
  const dbs = [openDatabase(file), openDatabase(file)];
  return {
    a: new EmbeddedVectorIndex(dbs[0]!, options),
    b: new EmbeddedVectorIndex(dbs[1]!, options),
    prunedThrough: async () => dbs[0]!.prepare('SELECT pruned_through FROM vector_changes_state').pluck().get() as number,
    close: async () => dbs.forEach((d) => d.close()),
  };
});

describe('EmbeddedVectorIndex', () => {
  it('changes deleted from the log (an erasure sweeps the erased user\'s) leave nothing of theirs in another process\'s memory or answers', async () => {
    const { vectors } = clustered(6, DIM, 3);
    const file = join(dir, `v${files++}.db`);
    const [da, db] = [openDatabase(file), openDatabase(file)];
    const [a, b] = [new EmbeddedVectorIndex(da), new EmbeddedVectorIndex(db)];
    await a.upsert(TAG, [point('kept', vectors[0]!), point('erased', vectors[1]!, 'v'), point('also-erased', vectors[2]!, 'v')]);
    const ids = async (user: string, i: number) => (await b.search(TAG, vectors[i]!, { user_id: user }, 3)).map((h) => h.id);
    assert.deepEqual((await ids('v', 1))[0], 'erased', 'loaded, and the rows of its candidates kept');
    await a.delete('v', ['erased', 'also-erased']);
    // as the sweep does: every change of the user, the deletes just written among them
    da.prepare("DELETE FROM vector_changes WHERE user_id = 'v'").run();
    assert.deepEqual(await ids('v', 1), [], 'no erased vector answers');
    assert.equal(b.stats()[0]!.vectors, 1, 'nor stays in memory');
    assert.deepEqual(await ids('u', 0), ['kept']);
    // the next write of another user is replayed as usual afterwards
    await a.upsert(TAG, [point('later', vectors[3]!)]);
    assert.deepEqual((await ids('u', 3))[0], 'later');
    await Promise.all([a.close(), b.close()]);
    da.close();
    db.close();
  });

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

  it('neither lists nor scans for a caller that gave up while the index loaded (its signal aborted)', async () => {
    const { vectors, near } = clustered(500, DIM, 13);
    const file = join(dir, `v${files++}.db`);
    const db = openDatabase(file);
    await new EmbeddedVectorIndex(db).upsert(TAG, vectors.map((v, i) => point(`p${i}`, v)));
    // a fresh index, as a fresh process has: its first search loads the vectors
    const ix = new EmbeddedVectorIndex(db);
    const store = (ix as unknown as { store: { matching: (...a: unknown[]) => Promise<Set<number>> } }).store;
    let listed = 0;
    const matching = store.matching.bind(store);
    store.matching = (...a) => (listed++, matching(...a));
    const gaveUp = new AbortController();
    const reason = new Error('budget spent');
    const searches = [ix.search(TAG, near(1), { user_id: 'u', where: { roles: ['user'] } }, 8, gaveUp.signal), ix.search(TAG, near(2), { user_id: 'u' }, 8, gaveUp.signal)];
    gaveUp.abort(reason);
    for (const s of searches) await assert.rejects(s, (err) => err === reason);
    assert.equal(listed, 0, 'no filter was listed for it');
    assert.equal(ix.stats()[0]!.vectors, 500, 'the load itself went on (the next search needs it)');
    assert.equal((await ix.search(TAG, near(1), { user_id: 'u', where: { roles: ['user'] } }, 8)).length, 8);
    assert.equal(listed, 1);

    // the load holds the event loop, as a big one does: the budgets of the searches waiting for it run
    // out meanwhile, and none of them lists or scans once it is done (before: every one did)
    const fresh = new EmbeddedVectorIndex(db);
    const freshStore = (fresh as unknown as { store: { matching: (...a: unknown[]) => Promise<Set<number>>; load: (...a: unknown[]) => Promise<void> } }).store;
    const load = freshStore.load.bind(freshStore);
    freshStore.load = async (...a) => {
      const until = performance.now() + 60;
      while (performance.now() < until);
      return load(...a);
    };
    let freshListed = 0;
    const freshMatching = freshStore.matching.bind(freshStore);
    freshStore.matching = (...a) => (freshListed++, freshMatching(...a));
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, (_, i) => withBudget((signal) => fresh.search(TAG, near(i), { user_id: 'u', where: { roles: ['user'] } }, 8, signal), 10, [])),
    );
    assert.deepEqual(outcomes.map((o) => o.status), ['timeout', 'timeout', 'timeout', 'timeout']);
    assert.equal(freshListed, 0, 'no search listed its filter for a caller that had given up');
    // the load goes on in pages after they gave up: the next search waits for it
    assert.equal((await fresh.search(TAG, near(0), { user_id: 'u' }, 8)).length, 8);
    assert.equal(fresh.stats()[0]!.vectors, 500);
    db.close();
  });

  it('shares a lone search\'s scan with the helper thread, and not a search with others in progress', async () => {
    const { vectors, near } = clustered(3000, DIM, 12);
    const db = openDatabase(join(dir, `v${files++}.db`));
    const ix = new EmbeddedVectorIndex(db, { shareScansFrom: 1000 });
    const alone = new EmbeddedVectorIndex(db, { shareScansFrom: 1e9 });
    await ix.upsert(TAG, vectors.map((v, i) => point(`p${i}`, v)));
    const thread = scanThread();
    const deadline = Date.now() + 20_000;
    // the first big scan starts the helper; scans are shared once it is up
    const qs = Array.from({ length: 3 }, (_, i) => near(i * 101));
    const search = (index: EmbeddedVectorIndex, q: Float32Array) => index.search(TAG, q, { user_id: 'u' }, 24);
    for (let before = thread.scans; thread.scans === before; ) {
      assert.ok(Date.now() < deadline, 'no search was shared');
      assert.deepEqual(await search(ix, qs[0]!), await search(alone, qs[0]!));
      await new Promise((r) => setTimeout(r, 2));
    }
    const before = thread.scans;
    const both = await Promise.all([search(ix, qs[1]!), search(ix, qs[2]!)]);
    assert.equal(thread.scans, before, 'two searches at once each scan on their own');
    assert.deepEqual(both, [await search(alone, qs[1]!), await search(alone, qs[2]!)]);
    await search(ix, qs[0]!);
    assert.equal(thread.scans, before + 1, 'a lone search shares its scan');
    db.close();
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
