// `neuralcleave doctor --embed TEXT` (the built CLI) against an embedding server of the test's own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from '../../fixtures/fake-embedding-server.js';
import { runCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';

describe('neuralcleave doctor --embed', () => {
  let server: FakeEmbeddingServer;
  const dir = tmpDir();
  const env = () => ({
    NEURALCLEAVE_SQLITE_PATH: `${dir}/nc.db`,
    NEURALCLEAVE_EMBEDDING_PROVIDER: 'ollama',
    NEURALCLEAVE_EMBEDDING_MODEL: 'nomic-embed-text',
    NEURALCLEAVE_EMBEDDING_URL: server.url,
    NEURALCLEAVE_EMBEDDING_RETRIES: '0',
    NEURALCLEAVE_LOG_LEVEL: 'silent',
  });
  before(async () => {
    server = await startFakeEmbeddingServer({ wire: 'ollama', dim: 48 });
  });
  after(() => server.close());

  it('prints the provider, the width, the time and the first values', async () => {
    const r = await runCli(['doctor', '--embed', 'my sister lives in Lisbon'], env(), undefined, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^embedding {3}ollama nomic-embed-text at http:\/\/127\.0\.0\.1:\d+ — text is sent to this machine$/m);
    assert.match(r.stdout, /^id {10}ollama:nomic-embed-text@48\+p[0-9a-f]{8}$/m);
    assert.match(r.stdout, /^width {7}48$/m);
    assert.match(r.stdout, /^time {8}[\d.]+ ms \(load \d+ ms\)$/m);
    assert.match(r.stdout, /^first {7}(-?[\d.]+(e-?\d+)?, ){7}-?[\d.]+(e-?\d+)?$/m);
    assert.deepEqual(server.requests.at(-1)!.texts, ['search_document: my sister lives in Lisbon']);

    const j = await runCli(['doctor', '--embed', 'my sister lives in Lisbon', '--json'], env(), undefined, dir);
    assert.equal(j.code, 0, j.stderr);
    const report = JSON.parse(j.stdout);
    assert.equal(report.provider, 'ollama');
    assert.equal(report.width, 48);
    assert.equal(report.first_values.length, 8);
    assert.ok(Math.abs(report.norm - 1) < 1e-3);
  });

  it('fails with the reason when the server does not answer (exit 1), and refuses a remote server in privacy mode (exit 2)', async () => {
    const gone = await runCli(['doctor', '--embed', 'x'], { ...env(), NEURALCLEAVE_EMBEDDING_URL: 'http://127.0.0.1:9' }, undefined, dir);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^neuralcleave: ollama nomic-embed-text at http:\/\/127\.0\.0\.1:9 .*ollama at http:\/\/127\.0\.0\.1:9 is not reachable/m);
    const remote = await runCli(['doctor', '--embed', 'x'], { ...env(), NEURALCLEAVE_EMBEDDING_URL: 'http://192.0.2.7:11434', NEURALCLEAVE_PRIVACY_MODE: 'true' }, undefined, dir);
    assert.equal(remote.code, 2);
    assert.match(remote.stderr, /privacy_mode is on, but embedding_provider "ollama" would send the text of every turn and query to http:\/\/192\.0\.2\.7:11434/);
  });
});
