// The real @huggingface/transformers + onnxruntime-node path, offline, on the generated tiny model.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BatchingEmbedder } from '../../../../src/embedding/batching.js';
import { loadEmbedder } from '../../../../src/embedding/load.js';
import { TransformersEmbedder } from '../../../../src/adapters/transformers/embedder.js';
import { writeTinyModel } from '../../../fixtures/tiny-model.js';
import { testMemory } from '../../../helpers/services.js';
import { tmpDir } from '../../../helpers/tmp.js';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));

describe('TransformersEmbedder on the generated tiny BERT model', () => {
  const dir = tmpDir();
  const modelDir = join(dir, 'models');
  const modelId = writeTinyModel(modelDir, { modelId: 'test/tiny-bert', hidden: 32 });
  let embedder: TransformersEmbedder;

  before(async () => {
    embedder = await TransformersEmbedder.load(modelId, { modelDir, cacheDir: join(dir, 'cache'), loadTimeoutMs: 5000 });
  });
  after(() => embedder.close());

  it('is named <model>@<dim> with the width the model really outputs', () => {
    assert.equal(embedder.id, 'test/tiny-bert@32');
    assert.equal(embedder.dim, 32);
  });

  it('gives one unit-length, finite vector per text, in order', async () => {
    const texts = ['I love hiking in the mountains', 'my dog is called Rex', 'x', 'Où est la gare ? 🚂'];
    const vectors = await embedder.embed(texts);
    assert.equal(vectors.length, texts.length);
    for (const v of vectors) {
      assert.equal(v.length, 32);
      assert.ok(v.every(Number.isFinite));
      assert.ok(Math.abs(norm(v) - 1) < 1e-5, `norm ${norm(v)}`);
    }
    assert.notDeepEqual(vectors[0], vectors[1]);
    assert.deepEqual(await embedder.embed([]), []);
  });

  it("pools like the library's own feature-extraction pipeline (mean over the mask, normalized)", async () => {
    const tf = await import('@huggingface/transformers');
    const reference = await tf.pipeline('feature-extraction', join(modelDir, modelId), { dtype: 'fp32', local_files_only: true });
    try {
      const texts = ['pizza', 'my sister lives in berlin', 'a much longer sentence about my favorite coffee and the books I read on sunday'];
      const expected = await reference(texts, { pooling: 'mean', normalize: true });
      const got = await embedder.embed(texts);
      assert.deepEqual(expected.dims, [3, 32]);
      got.forEach((v, i) => v.forEach((x, k) => assert.ok(Math.abs(x - (expected.data as Float32Array)[i * 32 + k]!) < 1e-6)));
    } finally {
      await reference.dispose();
    }
  });

  it('does not let padding change a vector: a text embeds the same alone and in a batch', async () => {
    const short = 'pizza';
    const [alone] = await embedder.embed([short]);
    const [inBatch] = await embedder.embed([short, 'a much longer sentence about my favorite coffee and the books I read on sunday']);
    assert.ok(dot(alone!, inBatch!) > 0.99999, `cosine ${dot(alone!, inBatch!)}`);
  });

  it('is deterministic and places texts sharing words closer than unrelated ones', async () => {
    const [a, b, c] = await embedder.embed(['my sister lives in berlin', 'my sister moved to berlin last year', 'pizza with cheese and coffee']);
    const [again] = await embedder.embed(['my sister lives in berlin']);
    assert.deepEqual(again, a);
    assert.ok(dot(a!, b!) > dot(a!, c!), `related ${dot(a!, b!)} vs unrelated ${dot(a!, c!)}`);
  });

  it('batches concurrent single embeds through the BatchingEmbedder into the same vectors', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `turn number ${i} about hiking and books`);
    const batching = new BatchingEmbedder(embedder, 16);
    const one = await Promise.all(texts.map((t) => batching.embedOne(t)));
    const direct = await embedder.embed(texts);
    one.forEach((v, i) => assert.ok(dot(v, direct[i]!) > 0.99999));
    assert.equal(batching.id, embedder.id);
  });

  it('is what loadEmbedder returns for a model name and model_dir', async () => {
    const e = await loadEmbedder({ embedding_model: modelId, model_dir: modelDir, model_cache_dir: join(dir, 'cache'), embedding_load_timeout_ms: 5000 });
    try {
      assert.ok(e instanceof TransformersEmbedder);
      assert.equal(e.id, 'test/tiny-bert@32');
      const [v] = await e.embed(['my sister lives in berlin']);
      const [w] = await embedder.embed(['my sister lives in berlin']);
      assert.deepEqual(v, w);
    } finally {
      await e.close();
    }
  });

  it('names another width by its own dimension', async () => {
    const otherId = writeTinyModel(modelDir, { modelId: 'test/tiny-bert-64', hidden: 64, seed: 7 });
    const other = await TransformersEmbedder.load(otherId, { modelDir, cacheDir: join(dir, 'cache'), loadTimeoutMs: 5000 });
    try {
      assert.equal(other.id, 'test/tiny-bert-64@64');
      assert.equal((await other.embed(['hello']))[0]!.length, 64);
    } finally {
      await other.close();
    }
  });

  // transformers.js resolves a model id against one module-wide folder and shares in-flight reads
  // by id: before loads went by folder, the good one here read the broken one's tokenizer.json
  it('keeps two loads of one model id from two folders apart, even at once', async () => {
    const good = join(dir, 'same-id-good');
    const broken = join(dir, 'same-id-broken');
    const sameId = writeTinyModel(good, { modelId: 'test/same-id', hidden: 32 });
    writeTinyModel(broken, { modelId: sameId, hidden: 16 });
    writeFileSync(join(broken, sameId, 'tokenizer.json'), '{"model": ');
    const options = (modelDir: string) => ({ modelDir, cacheDir: join(dir, 'cache'), loadTimeoutMs: 5000 });
    const [fromGood, fromBroken] = await Promise.allSettled([TransformersEmbedder.load(sameId, options(good)), TransformersEmbedder.load(sameId, options(broken))]);
    assert.equal(fromGood.status, 'fulfilled', String((fromGood as PromiseRejectedResult).reason));
    assert.equal(fromGood.value.id, 'test/same-id@32');
    await fromGood.value.close();
    assert.equal(fromBroken.status, 'rejected');
    assert.match(String(fromBroken.reason), /JSON/);
  });

  it('releases its session on close: closing twice is fine, embedding after close is refused', async () => {
    const e = await TransformersEmbedder.load(modelId, { modelDir, cacheDir: join(dir, 'cache'), loadTimeoutMs: 5000 });
    await e.close();
    await e.close();
    await assert.rejects(e.embed(['hello']), /closed/);
  });
});

describe('the memory service on the tiny transformers model', () => {
  const dir = tmpDir();
  const modelDir = join(dir, 'models');
  // 128 wide: at 32, two unrelated words already have cosines of ±0.23, too noisy to rank by
  const modelId = writeTinyModel(modelDir, { modelId: 'test/tiny-bert-128', hidden: 128 });

  it('embeds turns and answers from the semantic tier, across sessions', async () => {
    const { memory, services } = await testMemory({ embedding_model: modelId, model_dir: modelDir, model_cache_dir: join(dir, 'cache') });
    try {
      await services.embedders.ready();
      assert.equal(services.embedders.status, 'ready');
      assert.equal(services.embedders.current()?.id, `${modelId}@128`);
      await memory.addTurns([
        { user_id: 'ana', session_id: 's1', role: 'user', content: 'my sister lives in berlin' },
        { user_id: 'ana', session_id: 's1', role: 'user', content: 'I am allergic to peanuts' },
        { user_id: 'bob', session_id: 's9', role: 'user', content: 'my sister lives in berlin too' },
      ]);
      await services.queue.idle();
      const res = await memory.retrieve({ user_id: 'ana', session_id: 's2', query: 'where does my sister live', top_k: 5 });
      assert.equal(res.tiers.semantic.status, 'ok');
      assert.ok(res.tiers.semantic.count >= 1);
      // the semantic tier ranks the turn sharing "sister" first (the result may be labelled with
      // the long-term tier, which found it too: dedupe keeps one copy)
      const sister = res.results.find((r) => r.content === 'my sister lives in berlin');
      assert.equal(sister?.explain?.ranks?.semantic, 1, JSON.stringify(res.results));
      assert.ok(res.results.every((r) => r.user_id === 'ana'));
    } finally {
      await services.close();
    }
  });
});
