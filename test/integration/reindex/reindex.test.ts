import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jobIdFor } from '../../../queues/job-ids.js';
import type { Services, WireOptions } from '../../../src/app.js';
import type { MemoryEntry } from '../../../src/domain/entry.js';
import { contentHash } from '../../../src/domain/hash.js';
import type { Embedder } from '../../../src/ports/embedder.js';
import { HashEmbedder } from '../../../src/embedding/hash.js';
import { reindex } from '../../../src/memory/reindex.js';
import { writeTinyModel } from '../../fixtures/tiny-model.js';
import { startFakeQdrant, type FakeQdrant } from '../../helpers/fake-qdrant.js';
import { silentLogger, testMemory } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';

const NOW = Date.UTC(2026, 6, 1);
const USERS = ['ana', 'ben'];
const SAYINGS = [
  'My sister works as a doctor in Lisbon',
  'I am allergic to peanuts and milk',
  'My favourite food is pizza with cheese',
  'I play the guitar every weekend',
  'We visit my mother in Rome every summer',
  'My daughter goes to school by train',
  'I drink coffee in the morning and tea at night',
  'Our dog is called Rex and loves long walks',
  'I am reading a book about Tokyo',
  'My brother is an engineer at a big company',
  'ok thanks',
  'sounds good, see you tomorrow',
];
const QUERIES = ['which foods am I allergic to', 'what does my sister do', 'what music do I play', 'tell me about our dog', 'what do I drink', 'where does my mother live'];

/** the same memories, with the same ids and times, in every database of this file */
function corpus() {
  return USERS.flatMap((user, u) =>
    SAYINGS.map((content, i) => ({
      id: `${user}-t${i}`,
      user_id: user,
      session_id: `${user}-s${i % 3}`,
      role: 'user',
      content,
      created_at: new Date(Date.UTC(2026, 5, 1) + (u * 100 + i) * 60_000).toISOString(),
    })),
  );
}

/** a summary entry, written and embedded the way compaction does it: long-term upsert + embed job */
function summaryOf(user: string): MemoryEntry {
  const content = `Summary: ${user} likes pizza, plays guitar and has a dog called Rex`;
  const at = new Date(Date.UTC(2026, 5, 20)).toISOString();
  return { id: `${user}-summary`, user_id: user, session_id: `${user}-s0`, role: 'system', name: null, kind: 'summary', content, content_hash: contentHash(content), importance: 0.8, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
}

async function ingest(s: Services): Promise<void> {
  await s.writePath.addTurns(corpus());
  for (const user of USERS) {
    const e = summaryOf(user);
    await s.longTerm.upsert([e]);
    await s.queue.add('embed', [{ jobId: jobIdFor('embed', e.id), data: { turn_id: e.id, user_id: e.user_id, session_id: e.session_id, role: e.role, name: e.name, kind: e.kind, content: e.content, content_hash: e.content_hash, created_at: e.created_at } }]);
  }
  await s.queue.idle();
}

/** what each query returns: ids, tiers and scores (rounded: two runs of a model may differ in the last float bits) */
async function answers(s: Services) {
  const out: Record<string, Array<{ id: string; tier: string; score: string; similarity: string | null }>> = {};
  for (const user of USERS) {
    for (const query of QUERIES) {
      const r = await s.retriever.retrieve({ query, user_id: user, top_k: 5 }, NOW);
      assert.equal(r.tiers.semantic.status, 'ok', `semantic tier answered "${query}"`);
      out[`${user}: ${query}`] = r.results.map((x) => ({ id: x.id, tier: x.tier, score: x.score.toFixed(4), similarity: x.explain.similarity?.toFixed(4) ?? null }));
    }
  }
  return out;
}

async function open(sqlitePath: string, config: Record<string, unknown>, options: WireOptions = {}): Promise<Services> {
  const { services } = await testMemory({ sqlite_path: sqlitePath, ...config }, { reconcile: false, ...options });
  return services;
}

async function reindexWith(s: Services, options: Parameters<typeof reindex>[1] = {}) {
  const embedder = await s.embedders.ready();
  assert.ok(embedder, `embedder loaded: ${s.embedders.error}`);
  return reindex({ turnLog: s.turnLog, longTerm: s.longTerm, vectors: s.vectors, embedder, log: silentLogger() }, options);
}

function suite(backend: 'embedded' | 'qdrant') {
  describe(`memory reindex from hash to the tiny transformers model and back (${backend === 'qdrant' ? 'Qdrant adapter against a fake Qdrant HTTP server implementing the REST subset we use' : 'embedded index'})`, () => {
    const dir = tmpDir();
    let fake: FakeQdrant | null = null;
    let tiny: Record<string, unknown>;
    const hash = { embedding_model: 'hash' };
    const extra = () => (fake ? { qdrant_url: fake.url, qdrant_collection_prefix: `p${Math.random().toString(36).slice(2, 8)}` } : {});
    before(async () => {
      if (backend === 'qdrant') fake = await startFakeQdrant();
      tiny = { embedding_model: writeTinyModel(join(dir, 'models'), { hidden: 128 }), model_dir: join(dir, 'models') };
    });
    after(() => fake?.stop());

    it('leaves retrieval results equal to a fresh ingest, each way', async () => {
      const prefixes = { a: extra(), b: extra(), c: extra() };
      // baselines: fresh ingests under each model
      const freshHash = await open(join(dir, 'fresh-hash.db'), { ...hash, ...prefixes.a });
      await ingest(freshHash);
      const expectedHash = await answers(freshHash);
      await freshHash.close();
      const freshTiny = await open(join(dir, 'fresh-tiny.db'), { ...tiny, ...prefixes.b });
      await ingest(freshTiny);
      const expectedTiny = await answers(freshTiny);
      assert.notDeepEqual(expectedTiny, expectedHash, 'the two models rank differently, so the comparison means something');
      await freshTiny.close();

      // one database, ingested under hash, reindexed to the tiny model (old vectors pruned) and back
      const db = join(dir, 'switched.db');
      const first = await open(db, { ...hash, ...prefixes.c });
      await ingest(first);
      await first.close();

      const toTiny = await open(db, { ...tiny, ...prefixes.c });
      const there = await reindexWith(toTiny, { pruneOld: true, batchSize: 7 });
      assert.equal(there.total, corpus().length + USERS.length, 'every turn and every summary');
      assert.equal(there.embedded, there.total);
      assert.equal(there.pruned, there.total, 'the hash vectors are gone');
      assert.deepEqual(await answers(toTiny), expectedTiny);
      assert.equal((await toTiny.turnLog.counts()).pending_embed, 0);
      await toTiny.close();

      const back = await open(db, { ...hash, ...prefixes.c });
      const again = await reindexWith(back, { batchSize: 64 });
      assert.equal(again.embedded, again.total, 'everything embedded again: the hash vectors were pruned');
      assert.deepEqual(await answers(back), expectedHash);
      // the tiny model's vectors are still there (no --prune-old): a second switch re-embeds nothing
      await back.close();
      const toTinyAgain = await open(db, { ...tiny, ...prefixes.c });
      const second = await reindexWith(toTinyAgain);
      assert.deepEqual({ embedded: second.embedded, kept: second.kept }, { embedded: 0, kept: second.total });
      assert.deepEqual(await answers(toTinyAgain), expectedTiny);
      await toTinyAgain.close();
    });
  });
}

suite('embedded');
suite('qdrant');

describe('memory reindex resumes after an interruption', () => {
  /** 128-dimension hash vectors; fails its third model call when `failOnCall` is set */
  class Target implements Embedder {
    readonly inner = new HashEmbedder(128);
    readonly id = this.inner.id;
    readonly dim = this.inner.dim;
    texts = 0;
    calls = 0;
    constructor(private readonly failOnCall?: number) {}
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      if (++this.calls === this.failOnCall) throw new Error('injected failure: the model crashed');
      this.texts += texts.length;
      return this.inner.embed(texts);
    }
    async close(): Promise<void> {}
  }

  it('an injected model failure mid-way: the next run embeds only what the first did not finish', async () => {
    const dir = tmpDir();
    const s = await open(join(dir, 'r.db'), { embedding_model: 'hash' });
    after(() => s.close());
    const n = 300;
    for (let i = 0; i < n; i += 100) {
      await s.writePath.addTurns(Array.from({ length: 100 }, (_, k) => ({ id: `t${i + k}`, user_id: 'u', session_id: 's', role: 'user', content: `note ${i + k} about topic ${(i + k) % 13}` })));
    }
    await s.queue.idle();
    const deps = (embedder: Embedder) => ({ turnLog: s.turnLog, longTerm: s.longTerm, vectors: s.vectors, embedder, log: silentLogger() });

    const failing = new Target(3);
    await assert.rejects(reindex(deps(failing), { batchSize: 50 }), /injected failure/);
    const finished = await s.vectors.count(failing);
    assert.equal(finished, 100, 'two batches of 50 were written before the failure');

    const resumed = new Target();
    const report = await reindex(deps(resumed), { batchSize: 50 });
    assert.equal(report.kept, finished);
    assert.equal(report.embedded, report.total - finished);
    assert.equal(resumed.texts, report.total - finished, 'no finished turn was embedded again');
    assert.equal(await s.vectors.count(resumed), report.total);
    // retrieval with the new model sees every turn; the old model's vectors are untouched
    assert.equal(await s.vectors.count(s.embedders.current()!), report.total);
  });

  it('a memory deleted or edited while its batch is in flight leaves no stale vector behind', async () => {
    const dir = tmpDir();
    const s = await open(join(dir, 'race.db'), { embedding_model: 'hash' });
    after(() => s.close());
    await s.writePath.addTurns([
      { id: 'keep', user_id: 'u', session_id: 's', role: 'user', content: 'I like green tea' },
      { id: 'gone', user_id: 'u', session_id: 's', role: 'user', content: 'My old password hint is BLUEFISH' },
      { id: 'edited', user_id: 'u', session_id: 's', role: 'user', content: 'I live in Paris' },
    ]);
    await s.queue.idle();
    const inner = new HashEmbedder(96);
    // the service deletes and edits while the model is busy with the batch holding those turns
    const racing: Embedder = {
      id: inner.id,
      dim: inner.dim,
      async embed(texts) {
        if (texts.includes('My old password hint is BLUEFISH')) {
          // what memory.delete and memory.edit do to the SQLite file (their vector calls come too early to matter)
          await s.longTerm.delete('u', ['gone']);
          await s.turnLog.delete('u', ['gone']);
          await s.longTerm.update('u', 'edited', { content: 'I live in Berlin' });
          await s.turnLog.updateContent('u', 'edited', 'I live in Berlin', contentHash('I live in Berlin'));
        }
        return inner.embed(texts);
      },
      close: async () => {},
    };
    const report = await reindex({ turnLog: s.turnLog, longTerm: s.longTerm, vectors: s.vectors, embedder: racing, log: silentLogger() });
    assert.deepEqual([...(await s.vectors.has(racing, 'u', ['keep', 'gone', 'edited']))].sort(), ['edited', 'keep']);
    const [hit] = await s.vectors.search(racing, inner.embedOne('Berlin'), { user_id: 'u' }, 1);
    assert.equal(hit?.id, 'edited');
    assert.equal(hit?.payload.content, 'I live in Berlin');
    assert.equal(report.embedded, 2);
  });
});
