// Each pooling, normalization and prefix rule of the known-model table, on the real transformers.js
// path with the generated tiny model: copies of one model (same seed, same weights) under the names
// of known models are read as those models are, and compared with the plain reading of the copy
// named like MiniLM. The tiny model has no attention, so a token's state depends on that token only.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadEmbedder, type EmbedderConfig } from '../../../../src/embedding/load.js';
import type { Embedder } from '../../../../src/ports/embedder.js';
import { writeTinyModel } from '../../../fixtures/tiny-model.js';
import { tmpDir } from '../../../helpers/tmp.js';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));
const close = (a: Float32Array, b: Float32Array) => a.every((x, i) => Math.abs(x - b[i]!) < 1e-5);
const BGE_QUERY = 'Represent this sentence for searching relevant passages: ';

describe('per-model reading through transformers.js (tiny model)', () => {
  const dir = tmpDir();
  const modelDir = join(dir, 'models');
  const names = { plain: 'test/all-MiniLM-L6-v2', bge: 'test/bge-small-en-v1.5', e5: 'test/e5-small-v2', nomic: 'test/nomic-embed-text-v1.5' };
  for (const modelId of Object.values(names)) writeTinyModel(modelDir, { modelId, hidden: 64, seed: 7 });
  const open: Embedder[] = [];
  const load = async (model: string, overrides: Partial<EmbedderConfig> = {}) => {
    const e = await loadEmbedder({ embedding_model: model, model_dir: modelDir, model_cache_dir: join(dir, 'cache'), embedding_load_timeout_ms: 5000, ...overrides });
    open.push(e);
    return e;
  };
  let plain: Embedder;
  const plainOf = async (text: string) => (await plain.embed([text]))[0]!;

  before(async () => {
    plain = await load(names.plain);
  });
  after(() => Promise.all(open.map((e) => e.close())));

  it('mean-pools MiniLM, normalized, without prefixes, under the id vectors had before profiles', async () => {
    assert.equal(plain.id, `${names.plain}@64`);
    const [a, b] = await plain.embed(['hiking in the mountains', 'my dog is called Rex']);
    assert.ok(!close(a!, b!));
    assert.ok(Math.abs(norm(a!) - 1) < 1e-5);
    assert.ok(close((await plain.embed(['hiking in the mountains'], 'query'))[0]!, a!), 'no query prefix');
  });

  it('takes the [CLS] token of bge: every text starts with the same token, so every vector is that one', async () => {
    const bge = await load(names.bge);
    assert.match(bge.id, /^test\/bge-small-en-v1\.5@64\+p[0-9a-f]{8}$/);
    const [a, b] = await bge.embed(['hiking in the mountains', 'my dog is called Rex']);
    assert.ok(close(a!, b!), 'CLS pooling: one vector for both texts');
    assert.ok(Math.abs(norm(a!) - 1) < 1e-5);
    assert.ok(!close(a!, await plainOf('hiking in the mountains')), 'not the mean');
  });

  it('puts the bge instruction before queries only (shown with mean pooling, where the words count)', async () => {
    const bge = await load(names.bge, { embedding_pooling: 'mean' });
    const text = 'where does my sister live';
    assert.ok(close((await bge.embed([text], 'query'))[0]!, await plainOf(BGE_QUERY + text)));
    assert.ok(close((await bge.embed([text], 'document'))[0]!, await plainOf(text)));
  });

  it('embeds e5 queries as "query: …" and stored texts as "passage: …"', async () => {
    const e5 = await load(names.e5);
    const text = 'my sister moved to berlin';
    assert.ok(close((await e5.embed([text], 'query'))[0]!, await plainOf(`query: ${text}`)));
    assert.ok(close((await e5.embed([text]))[0]!, await plainOf(`passage: ${text}`)));
    assert.ok(!close((await e5.embed([text]))[0]!, await plainOf(text)));
  });

  it('embeds nomic queries as "search_query: …" and stored texts as "search_document: …"', async () => {
    const nomic = await load(names.nomic);
    const text = 'the piano lessons on friday';
    assert.ok(close((await nomic.embed([text], 'query'))[0]!, await plainOf(`search_query: ${text}`)));
    assert.ok(close((await nomic.embed([text], 'document'))[0]!, await plainOf(`search_document: ${text}`)));
  });

  it('leaves the mean unnormalized when config says so, and a prefix set in config wins over the table', async () => {
    const raw = await load(names.plain, { embedding_normalize: false, embedding_document_prefix: 'note: ' });
    assert.notEqual(raw.id, plain.id, 'another reading, another id');
    const [v] = await raw.embed(['hiking in the mountains']);
    const unit = await plainOf('note: hiking in the mountains');
    assert.ok(Math.abs(norm(v!) - 1) > 1e-3, `norm ${norm(v!)}`);
    assert.ok(close(v!.map((x) => x / norm(v!)), unit), 'the same direction as the normalized mean');
  });
});
