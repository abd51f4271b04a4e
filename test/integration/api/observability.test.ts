import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { contentHash } from '../../../src/domain/hash.js';
import { startApi, turn, type Api } from './harness.js';

const KEY = 'observer-key-0123456789abc';

/** the value of one sample line of the Prometheus text, or undefined */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('health, metrics and the OpenAPI document', () => {
  let api: Api;
  before(async () => {
    api = await startApi({ api_keys: [{ key: KEY, users: ['*'] }] });
  });
  after(() => api.close());

  test("GET /health: each tier's backend and state, queue depths, the embedder", async () => {
    const r = await api.request('GET', '/health', { key: KEY });
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'ok');
    for (const part of ['short_term', 'semantic', 'long_term', 'queue', 'embedder']) {
      assert.equal(typeof r.json.backends[part].backend, 'string', part);
      assert.equal(r.json.backends[part].state, 'ok', part);
    }
    assert.deepEqual(Object.keys(r.json.queues.embed).sort(), ['active', 'completed', 'delayed', 'failed', 'waiting']);
    assert.equal(r.json.embedder.status, 'ready');
    assert.equal(r.json.embedder.dim, 384);
  });

  test('GET /metrics: request latency by route, tier latency, queue depths, jobs, fallback state', async () => {
    const w = await api.request('POST', '/sessions/m/turns', { key: KEY, body: { turns: [turn('metrics one'), turn('metrics two')] } });
    assert.equal(w.status, 202);
    await api.memory.idle();
    assert.equal((await api.request('POST', '/memory/retrieve', { key: KEY, body: { query: 'metrics', session_id: 'm' } })).status, 200);
    await api.request('GET', '/memory/nope-route-123', { key: KEY });
    await api.request('GET', '/memory/search?limit=0', { key: KEY });

    const r = await api.request('GET', '/metrics', { key: KEY });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    const m = r.text;
    const http = 'neuralcleave_http_request_duration_seconds_count';
    assert.equal(sample(m, http, { method: 'POST', route: '/sessions/:session_id/turns', status: '202' }), 1);
    assert.equal(sample(m, http, { method: 'POST', route: '/memory/retrieve', status: '200' }), 1);
    assert.equal(sample(m, http, { method: 'GET', route: '/memory/search', status: '400' }), 1);
    // the unknown id matched the /memory/:id route; a raw path never becomes a label
    assert.ok(!m.includes('nope-route-123'));
    for (const tier of ['short_term', 'semantic', 'long_term']) {
      assert.equal(sample(m, 'neuralcleave_retrieve_tier_duration_seconds_count', { tier, status: 'ok' }), 1, tier);
    }
    assert.equal(sample(m, 'neuralcleave_job_duration_seconds_count', { queue: 'embed', outcome: 'completed' }), 2);
    assert.equal(sample(m, 'neuralcleave_job_duration_seconds_count', { queue: 'persist', outcome: 'completed' }), 2);
    assert.equal(sample(m, 'neuralcleave_queue_jobs', { queue: 'embed', state: 'waiting' }), 0);
    assert.equal(sample(m, 'neuralcleave_turn_log_pending', { job: 'persist' }), 0);
    assert.equal(sample(m, 'neuralcleave_backend_fallback', { part: 'short_term' }), 0);
    assert.equal(sample(m, 'neuralcleave_backend_up', { part: 'long_term', backend: 'sqlite' }), 1);
  });

  test('GET /metrics counts job failures', { timeout: 30_000 }, async () => {
    // an embed job fails when its vector cannot be stored: the semantic tier's upsert throws until the
    // job has failed once (a batch whose write fails tries each vector alone before failing the job)
    const origUpsert = api.services.vectors.upsert.bind(api.services.vectors);
    api.services.vectors.upsert = async () => {
      throw new Error('vector store unavailable');
    };
    const failed = new Promise<void>((resolve) => {
      const listener = (e: { ok: boolean; jobId: string }) => {
        if (e.ok || e.jobId !== 'embed:failing-job') return;
        api.services.vectors.upsert = origUpsert; // the retry (after the backoff) succeeds
        api.services.events.job.delete(listener);
        resolve();
      };
      api.services.events.job.add(listener);
    });
    // the embed processor skips a turn that is not in the turn log, so the job's turn must be there
    const failing = { id: 'failing', user_id: 'u', session_id: 's', role: 'user' as const, name: null, content: 'x', content_hash: contentHash('x'), created_at: new Date().toISOString(), importance: null, pinned: false, metadata: null };
    await api.services.turnLog.append([failing]);
    await api.services.queue.add('embed', [
      {
        jobId: 'embed:failing-job',
        data: { turn_id: failing.id, user_id: failing.user_id, session_id: failing.session_id, role: failing.role, name: null, kind: 'turn', content: failing.content, content_hash: failing.content_hash, created_at: failing.created_at },
      },
    ]);
    await failed;
    const m = (await api.request('GET', '/metrics', { key: KEY })).text;
    assert.equal(sample(m, 'neuralcleave_job_failures_total', { queue: 'embed' }), 1);
    assert.equal(sample(m, 'neuralcleave_job_duration_seconds_count', { queue: 'embed', outcome: 'failed' }), 1);
    assert.equal(sample(m, 'neuralcleave_queue_jobs', { queue: 'embed', state: 'delayed' }), 1);
  });

  test('GET /openapi.json documents every route, generated from the schemas, and each documented route exists', async () => {
    const r = await api.request('GET', '/openapi.json', { key: KEY });
    assert.equal(r.status, 200);
    const doc = r.json;
    assert.equal(doc.openapi, '3.1.0');
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    for (const expected of [
      'POST /sessions/{session_id}/turns',
      'POST /memory/retrieve',
      'GET /memory/search',
      'GET /memory/recent',
      'PATCH /memory/{id}',
      'DELETE /memory/{id}',
      'POST /memory/prune',
      'GET /health',
      'GET /metrics',
      'GET /openapi.json',
    ]) {
      assert.ok(routes.includes(expected), `${expected} missing from ${routes.join(', ')}`);
    }
    // generated from the zod schemas: bounds and enums come through
    const search = doc.paths['/memory/search'].get;
    assert.ok(search.parameters.some((p: { name: string; required: boolean }) => p.name === 'q' && p.required));
    assert.ok(search.parameters.some((p: { name: string; required: boolean }) => p.name === 'limit' && !p.required));
    const retrieveBody = doc.paths['/memory/retrieve'].post.requestBody.content['application/json'].schema;
    assert.equal(retrieveBody.properties.top_k.maximum, 100);
    const turnsOp = doc.paths['/sessions/{session_id}/turns'].post;
    assert.ok(JSON.stringify(turnsOp.requestBody).includes('"enum":["user","assistant","system","tool"]'));
    assert.ok(turnsOp.responses['202'] && turnsOp.responses['401'] && turnsOp.responses['413']);
    assert.deepEqual(doc.paths['/health'].get.security, []);
    assert.ok(doc.components.schemas.Error.properties.error.properties.code.enum.includes('bad_request'));
    // every documented route answers (not 404, not 405): the document cannot describe a missing route
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const concrete = path.replace('{session_id}', 'doc-s').replace('{id}', 'doc-id');
      const res = await api.request(method, concrete, { key: KEY, ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}) });
      assert.ok(res.status !== 405 && !(res.status === 404 && res.json?.error?.message?.startsWith('no route')), `${route} → ${res.status}`);
    }
  });
});
