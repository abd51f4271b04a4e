// First use downloads the model into model_cache_dir; that folder then serves as a model_dir for a
// machine with no internet. The hub is a loopback stand-in serving the generated tiny model the way
// huggingface.co lays files out (`/<model id>/resolve/main/<file>`).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MODEL_FILES, TransformersEmbedder } from '../../../src/adapters/transformers/embedder.js';
import { writeTinyModel } from '../../fixtures/tiny-model.js';
import { tmpDir } from '../../helpers/tmp.js';

describe('downloading a model from the hub on first use', () => {
  const dir = tmpDir();
  const hubFiles = join(dir, 'hub');
  const modelId = writeTinyModel(hubFiles, { modelId: 'org/tiny-bert' });
  const requested: string[] = [];
  const server = createServer((req, res) => {
    requested.push(req.url ?? '');
    const m = /^\/(.+?)\/resolve\/main\/(.+)$/.exec(decodeURIComponent(req.url ?? ''));
    const file = m ? normalize(join(hubFiles, m[1]!, m[2]!)) : '';
    if (!m || !file.startsWith(hubFiles) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end('Entry not found');
    const body = readFileSync(file);
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' }).end(body);
  });
  let hub = '';

  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hub = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  after(() => new Promise((r) => server.close(r)));

  it('fetches the files into the cache folder, laid out as a model_dir', async () => {
    const cacheDir = join(dir, 'cache');
    const e = await TransformersEmbedder.load(modelId, { cacheDir, loadTimeoutMs: 5000, remoteHost: hub });
    try {
      assert.equal(e.id, 'org/tiny-bert@32');
      for (const f of MODEL_FILES) assert.ok(existsSync(join(cacheDir, modelId, f)), `${f} cached`);
      assert.ok(requested.some((u) => u.endsWith('/onnx/model.onnx')));
    } finally {
      await e.close();
    }
    // the cache folder, copied to a machine with no internet, is its model_dir
    server.close();
    const offline = await TransformersEmbedder.load(modelId, { modelDir: cacheDir, cacheDir: join(dir, 'other-cache'), loadTimeoutMs: 5000 });
    try {
      assert.equal(offline.id, 'org/tiny-bert@32');
      const original = await TransformersEmbedder.load(modelId, { modelDir: hubFiles, cacheDir: join(dir, 'third-cache'), loadTimeoutMs: 5000 });
      try {
        assert.deepEqual(await offline.embed(['my sister lives in berlin']), await original.embed(['my sister lives in berlin']));
      } finally {
        await original.close();
      }
    } finally {
      await offline.close();
    }
  });

  it('names the model when the hub has no such model', async () => {
    const s2 = createServer((_req, res) => void res.writeHead(404).end('Repository not found'));
    await new Promise<void>((r) => s2.listen(0, '127.0.0.1', r));
    try {
      await assert.rejects(
        TransformersEmbedder.load('org/no-such-model', { cacheDir: join(dir, 'cache-404'), loadTimeoutMs: 5000, remoteHost: `http://127.0.0.1:${(s2.address() as { port: number }).port}/` }),
        /cannot load embedding model "org\/no-such-model"/,
      );
    } finally {
      await new Promise((r) => s2.close(r));
    }
  });
});
