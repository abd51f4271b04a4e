import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { healthReport } from '../../../../src/health.js';
import type { Memory } from '../../../../src/memory/memory.js';
import { startFakeQdrant } from '../../../helpers/fake-qdrant.js';
import { freePort } from '../../../helpers/redis.js';
import { capturingLogger, testMemory } from '../../../helpers/services.js';

const warnings = (lines: Array<{ level: number; msg: string }>) => lines.filter((l) => l.level === 40);

const FACTS = [
  'My sister Maribel is a veterinarian in Zaragoza',
  'I am allergic to hazelnuts and kiwi',
  'Our wedding anniversary is on the 14th of September',
];

async function remember(memory: Memory, user: string): Promise<void> {
  await memory.addTurns(FACTS.map((content, i) => ({ user_id: user, session_id: `old-${i}`, role: 'user', content, importance: 0.9 })));
  await memory.idle();
}

describe('semantic tier fallback (docs/architecture.md, deployment and backends)', () => {
  it('qdrant_url unset: the embedded index, reported ok, and no warning', async () => {
    const log = capturingLogger('warn');
    const { services } = await testMemory({}, { logger: log.logger });
    after(() => services.close());
    assert.equal(services.vectors.backend, 'embedded');
    assert.equal(services.backends().semantic.state, 'ok');
    assert.match(services.backends().semantic.detail ?? '', /qdrant_url not set/);
    assert.deepEqual(warnings(log.lines()), []);
  });

  it('a closed port at start: the embedded index, one warning, and backends() says fallback and why', async () => {
    const port = await freePort();
    const log = capturingLogger('warn');
    const { memory, services } = await testMemory({ qdrant_url: `http://127.0.0.1:${port}` }, { logger: log.logger });
    after(() => services.close());
    assert.equal(services.vectors.backend, 'embedded');
    const semantic = services.backends().semantic;
    assert.equal(semantic.backend, 'embedded');
    assert.equal(semantic.state, 'fallback');
    assert.match(semantic.detail ?? '', new RegExp(`127\\.0\\.0\\.1:${port}.*not reachable.*ECONNREFUSED`));
    await remember(memory, 'alice');
    const r = await memory.retrieve({ query: 'which foods am I allergic to', user_id: 'alice' });
    assert.equal(r.tiers.semantic.backend, 'embedded');
    assert.equal(r.tiers.semantic.status, 'ok');
    assert.ok(r.tiers.semantic.count > 0, 'the embedded index answers');
    const w = warnings(log.lines());
    assert.equal(w.length, 1, JSON.stringify(w));
    assert.match(w[0]!.msg, /Qdrant is not reachable/);
  });

  it('a Qdrant that accepts connections but never answers at start: fallback after qdrant_connect_timeout_ms', async () => {
    const fake = await startFakeQdrant();
    after(() => fake.stop());
    fake.hang();
    const { services } = await testMemory({ qdrant_url: fake.url, qdrant_connect_timeout_ms: 200 });
    after(() => services.close());
    assert.equal(services.backends().semantic.state, 'fallback');
    assert.match(services.backends().semantic.detail ?? '', /not reachable/);
  });

  it('against a fake Qdrant HTTP server that stops answering mid-run: retrieve skips the semantic tier at its budget, counts it, and long-term still answers', async () => {
    const fake = await startFakeQdrant();
    after(() => fake.stop());
    const { memory, services } = await testMemory({ qdrant_url: fake.url, semantic_budget_ms: 250, qdrant_timeout_ms: 60_000 });
    after(() => services.close());
    assert.equal(services.vectors.backend, 'qdrant');
    assert.deepEqual(services.backends().semantic.state, 'ok');
    await remember(memory, 'bob');
    assert.equal(await services.vectors.count(undefined, { user_id: 'bob' }), FACTS.length, 'the embed worker wrote to Qdrant');

    const query = { query: 'which foods am I allergic to', user_id: 'bob' };
    const healthy = await memory.retrieve(query);
    assert.equal(healthy.tiers.semantic.status, 'ok');
    assert.equal(healthy.tiers.semantic.backend, 'qdrant');
    assert.ok(healthy.tiers.semantic.count > 0);

    fake.hang();
    const started = Date.now();
    const degraded = await memory.retrieve(query);
    const elapsed = Date.now() - started;
    assert.equal(degraded.tiers.semantic.status, 'timeout');
    assert.equal(degraded.tiers.semantic.count, 0);
    assert.equal(degraded.tiers.long_term.status, 'ok');
    assert.ok(degraded.results.some((x) => x.content.includes('hazelnuts')), 'long-term still finds the fact');
    // a coarse bound, not a latency figure: the pass did not wait for the Qdrant request (60 s timeout)
    assert.ok(elapsed < 30_000, `retrieve returned after ${elapsed} ms`);
    assert.deepEqual(services.skipped.semantic, { timeout: 1, error: 0 });
    assert.deepEqual(services.skipped.long_term, { timeout: 0, error: 0 });
    const health = await healthReport(services);
    assert.equal(health.backends.semantic.state, 'down');

    fake.resume();
    const recovered = await memory.retrieve(query);
    assert.equal(recovered.tiers.semantic.status, 'ok');
    assert.deepEqual(recovered.results.map((x) => x.id), healthy.results.map((x) => x.id));
  });

  it('a Qdrant that goes away mid-run (connection refused) counts an error and the pass goes on', async () => {
    const fake = await startFakeQdrant();
    after(() => fake.stop());
    const { memory, services } = await testMemory({ qdrant_url: fake.url });
    after(() => services.close());
    await remember(memory, 'carol');
    await fake.stop();
    const r = await memory.retrieve({ query: 'wedding anniversary', user_id: 'carol' });
    assert.equal(r.tiers.semantic.status, 'error');
    assert.match(r.tiers.semantic.error ?? '', /qdrant/);
    assert.ok(r.results.some((x) => x.content.includes('anniversary')));
    assert.deepEqual(services.skipped.semantic, { timeout: 0, error: 1 });
  });
});
