// EmbedderProvider's outages: one warning per outage however many calls fail during it, a probe with
// backoff that ends it, a permanent failure that is no outage.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { EmbedderProvider } from '../../../src/embedding/provider.js';
import { EmbedderLoadError, EmbedderUnavailableError, type Embedder } from '../../../src/ports/embedder.js';
import { until } from '../../helpers/until.js';

function capturingLogger() {
  const records: Array<{ level: number; msg: string; err?: string }> = [];
  return { logger: pino({ level: 'debug' }, { write: (l: string) => void records.push(JSON.parse(l)) }), records };
}

/** an embedder whose server is up or down as the test says */
function switchable() {
  const state = { up: true, calls: 0 };
  const embedder: Embedder = {
    id: 'fake:m@2',
    dim: 2,
    async embed(texts) {
      state.calls++;
      if (!state.up) throw new EmbedderUnavailableError('fake at http://127.0.0.1:1 is not reachable: connect ECONNREFUSED');
      return texts.map(() => Float32Array.of(1, 0));
    },
    async close() {},
  };
  return { state, embedder };
}

describe('EmbedderProvider outages', () => {
  it('warns once per outage however many calls fail during it, and finds the server back by probing', async () => {
    const { logger, records } = capturingLogger();
    const { state, embedder } = switchable();
    const p = new EmbedderProvider('m', async () => embedder, logger, { provider: 'ollama', probeMs: 20, maxProbeMs: 40 });
    const e = (await p.ready())!;
    const warnings = () => records.filter((r) => r.level === 40).length;
    for (let outage = 1; outage <= 2; outage++) {
      state.up = false;
      for (let i = 0; i < 5; i++) await assert.rejects(e.embed(['x']), EmbedderUnavailableError);
      assert.equal(p.status, 'unavailable');
      assert.deepEqual(p.report(), { backend: 'fake:m@2', state: 'down', detail: 'fake at http://127.0.0.1:1 is not reachable: connect ECONNREFUSED' });
      assert.equal(warnings(), outage, 'one warning for this outage');
      const before = state.calls;
      await until('a probe', () => state.calls > before + 1, 2000, 5);
      state.up = true;
      await until('the outage over', () => p.status === 'ready', 2000, 5);
      assert.equal(p.error, null);
      assert.equal(records.filter((r) => /answers again/.test(r.msg)).length, outage);
    }
    await p.close();
  });

  it('a server down at start is an outage, retried until it answers; a refused setup is a failure, not retried', async () => {
    const { logger, records } = capturingLogger();
    let attempts = 0;
    const p = new EmbedderProvider('m', async () => {
      attempts++;
      if (attempts < 3) throw new EmbedderUnavailableError('not reachable');
      return switchable().embedder;
    }, logger, { provider: 'openai', probeMs: 10 });
    assert.equal(await p.ready(), null);
    assert.equal(p.status, 'unavailable');
    assert.equal(p.report().backend, 'openai:m');
    await until('loaded on a later try', () => p.status === 'ready', 2000, 5);
    assert.equal(attempts, 3);
    assert.ok(p.current());
    assert.equal(records.filter((r) => r.level === 40).length, 1);
    await p.close();

    let tries = 0;
    const refused = new EmbedderProvider('m', async () => {
      tries++;
      throw new EmbedderLoadError('m', 'openai at http://127.0.0.1:1 answered HTTP 401: no key (set embedding_api_key)');
    }, logger, { provider: 'openai', probeMs: 10 });
    assert.equal(await refused.ready(), null);
    assert.equal(refused.status, 'failed');
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(tries, 1, 'not retried');
    assert.equal(records.at(-1)!.level, 40);
    assert.match(records.at(-1)!.err!, /HTTP 401/);
    assert.match(refused.report().detail!, /HTTP 401/);
    await refused.close();
  });
});
