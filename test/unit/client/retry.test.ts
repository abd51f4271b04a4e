import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BackendUnavailableError, BadRequestError, InternalError, MemoryClient, MemoryNetworkError, MemoryTimeoutError } from '../../../src/client/index.js';

type Step = { status: number; body?: unknown; headers?: Record<string, string> } | 'refused' | 'reset' | 'hang';

/**
 * A scripted fetch: the retry policy is a property of the client alone, so these cases script what the
 * network does (the same client against a real server, restarted and frozen, is in
 * test/integration/client/client.test.ts).
 */
function scripted(steps: Step[]): { fetch: typeof fetch; bodies: unknown[] } {
  const bodies: unknown[] = [];
  const fetchFn = (async (_url: string, init: RequestInit) => {
    bodies.push(init.body === undefined ? undefined : JSON.parse(String(init.body)));
    const step = steps.shift() ?? { status: 599 };
    if (step === 'refused') throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    if (step === 'reset') throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    if (step === 'hang') {
      return new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    }
    return new Response(step.body === undefined ? '' : JSON.stringify(step.body), { status: step.status, headers: { 'content-type': 'application/json', ...step.headers } });
  }) as typeof fetch;
  return { fetch: fetchFn, bodies };
}

const client = (s: ReturnType<typeof scripted>, retries = 3) => new MemoryClient({ baseUrl: 'http://memory.test', fetch: s.fetch, retries, retryDelayMs: 1, timeoutMs: 50 });
const error = (code: string, status: number) => ({ status, body: { error: { code, message: code } } });
const OK_TURNS = { status: 202, body: { ids: ['x'], accepted: 1, duplicates: 0 } };
const OK_RETRIEVE = { status: 200, body: { results: [], prompt_blocks: '', tiers: {} } };

describe('MemoryClient retry policy', () => {
  test('every call retries a refused or reset connection and a 503, then answers', async () => {
    const s = scripted(['refused', 'reset', error('backend_unavailable', 503), OK_RETRIEVE]);
    assert.deepEqual((await client(s).retrieve({ query: 'q' })).results, []);
    assert.equal(s.bodies.length, 4);
  });

  test('gives up after `retries` further attempts with the last error', async () => {
    const s = scripted([error('backend_unavailable', 503), error('backend_unavailable', 503), error('backend_unavailable', 503)]);
    await assert.rejects(client(s, 2).recent(), BackendUnavailableError);
    assert.equal(s.bodies.length, 3);
  });

  test('a 503 Retry-After is waited for', async () => {
    const s = scripted([{ ...error('backend_unavailable', 503), headers: { 'retry-after': '0.3' } }, OK_RETRIEVE]);
    const started = Date.now();
    await client(s).retrieve({ query: 'q' });
    assert.ok(Date.now() - started >= 280, 'waited the Retry-After, not the 1 ms backoff');
  });

  test('4xx and, except for turn writes, 500 and timeouts are not retried', async () => {
    let s = scripted([error('bad_request', 400), OK_RETRIEVE]);
    await assert.rejects(client(s).retrieve({ query: '' }), BadRequestError);
    assert.equal(s.bodies.length, 1);
    s = scripted([error('internal', 500), OK_RETRIEVE]);
    await assert.rejects(client(s).retrieve({ query: 'q' }), InternalError);
    assert.equal(s.bodies.length, 1);
    s = scripted(['hang', OK_RETRIEVE]);
    await assert.rejects(client(s).retrieve({ query: 'q' }), MemoryTimeoutError);
    assert.equal(s.bodies.length, 1);
    s = scripted([error('bad_request', 400), OK_TURNS]);
    await assert.rejects(client(s).addTurns('s', { role: 'user', content: 'hi' }), BadRequestError);
    assert.equal(s.bodies.length, 1);
  });

  test('turn writes retry timeouts and 500 too, resending the same turn ids', async () => {
    const s = scripted(['hang', error('internal', 500), OK_TURNS]);
    await client(s).addTurns('s', [{ role: 'user', content: 'a' }, { id: 'mine', role: 'assistant', content: 'b' }]);
    assert.equal(s.bodies.length, 3);
    const ids = s.bodies.map((b) => (b as { turns: Array<{ id: string }> }).turns.map((t) => t.id));
    assert.equal(ids[0]![1], 'mine', 'a given id is kept');
    assert.match(ids[0]![0]!, /^[0-9a-f-]{36}$/);
    assert.deepEqual(ids[1], ids[0]);
    assert.deepEqual(ids[2], ids[0]);
  });

  test('chat is retried on 503 and a refused connection only: a reset may have written the turns', async () => {
    const reply = { status: 200, body: { reply: 'hi' } };
    let s = scripted(['refused', error('llm_unavailable', 503), reply]);
    assert.equal((await client(s).chat({ session_id: 's', message: 'hello' })).reply, 'hi');
    assert.equal(s.bodies.length, 3);
    s = scripted(['reset', reply]);
    await assert.rejects(client(s).chat({ session_id: 's', message: 'hello' }), MemoryNetworkError);
    assert.equal(s.bodies.length, 1);
    s = scripted(['hang', reply]);
    await assert.rejects(client(s).chat({ session_id: 's', message: 'hello' }), MemoryTimeoutError);
    assert.equal(s.bodies.length, 1);
  });

  test('an error body that is not ours still maps by status; a non-URL baseUrl is refused at once', async () => {
    const s = scripted([{ status: 404, body: { message: 'not here' } }]);
    const err = await client(s).get('x').catch((e: unknown) => e);
    assert.equal((err as { code: string }).code, 'not_found');
    assert.throws(() => new MemoryClient({ baseUrl: '127.0.0.1:8080' }), /absolute http\(s\) URL/);
    assert.throws(() => new MemoryClient({ baseUrl: 'localhost:8080' }), /absolute http\(s\) URL/, 'a scheme-less host:port parses as a URL of scheme "localhost:"');
  });
});
