import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  BadRequestError,
  ContentConflictError,
  ForbiddenError,
  LlmUnavailableError,
  MemoryApiError,
  MemoryClient,
  MemoryNetworkError,
  MemoryTimeoutError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
} from '../../../src/client/index.js';
import { startCli, stop } from '../../helpers/cli.js';
import { startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';

const ALICE_KEY = 'client-alice-key-000000000000';
const BOB_KEY = 'client-bob-key-00000000000000';
const MAX_BODY = 16 * 1024;

/** Signals `serve` and its HTTP processes (`serve` runs one per core by default), so SIGSTOP freezes the whole service. */
function signalService(child: ChildProcess, signal: NodeJS.Signals): void {
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number);
  for (const pid of [child.pid!, ...children]) process.kill(pid, signal);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The typed client against the built `neuralcleave serve` (a real process, a real SQLite file, a fake Ollama). */
describe('MemoryClient against a running serve', () => {
  const dir = tmpDir();
  let ollama: FakeLlm;
  let serve: ChildProcess;
  let port = 0;
  let base = '';
  let alice: MemoryClient;

  const start = async (): Promise<void> => {
    const started = await startCli(
      ['serve'],
      {
        NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'),
        NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
        NEURALCLEAVE_LOG_LEVEL: 'warn',
        NEURALCLEAVE_PORT: String(port),
        NEURALCLEAVE_API_KEYS: `${ALICE_KEY}=alice;${BOB_KEY}=bob`,
        NEURALCLEAVE_MAX_BODY_BYTES: String(MAX_BODY),
        NEURALCLEAVE_LLM_PROVIDER: 'ollama',
        NEURALCLEAVE_LLM_BASE_URL: ollama.url,
      },
      /listening on (http:\/\/\S+)/,
    );
    serve = started.child;
    base = started.match[1]!;
  };

  before(async () => {
    ollama = await startFakeOllama();
    port = await freePort();
    await start();
    alice = new MemoryClient({ baseUrl: base, apiKey: ALICE_KEY, timeoutMs: 5_000, retries: 0 });
  });
  after(async () => {
    if (serve) {
      if (serve.exitCode === null) signalService(serve, 'SIGCONT');
      await stop(serve);
    }
    await ollama?.close();
  });

  test('health, addTurns, retrieve from a new session, search, recent, get, update, delete, prune', async () => {
    const health = await alice.health();
    assert.ok(['ok', 'degraded'].includes(health.status));
    assert.ok(health.backends.long_term, 'the report names the long-term backend');

    const written = await alice.addTurns('s1', [
      { id: 'c-1', role: 'user', content: 'My sister Ana works as a dentist in Porto.' },
      { role: 'assistant', content: 'Noted: Ana, a dentist in Porto.' },
      { id: 'c-3', role: 'user', content: 'I ride a green bicycle to work.' },
    ]);
    assert.equal(written.accepted, 3);
    assert.equal(written.ids[0], 'c-1');
    assert.match(written.ids[1]!, /^[0-9a-f-]{36}$/, 'the client gave the id-less turn an id');
    assert.equal((await alice.addTurns('s1', { id: 'c-1', role: 'user', content: 'My sister Ana works as a dentist in Porto.' })).duplicates, 1);

    await until('the turns to be persisted', async () => (await alice.recent({ session_id: 's1' })).length === 3, 20_000);
    const r = await alice.retrieve({ query: 'what does my sister do for work', session_id: 's-new', top_k: 5 });
    const hit = r.results.find((x) => x.id === 'c-1');
    assert.ok(hit, `c-1 among ${r.results.map((x) => x.id).join(', ')}`);
    assert.notEqual(hit.tier, 'short_term');
    assert.equal(typeof hit.explain.fusion, 'number');
    assert.match(r.prompt_blocks, /dentist in Porto/);
    assert.equal(r.tiers.long_term.status, 'ok');

    const found = await alice.search('bicycle');
    assert.deepEqual(found.map((e) => e.id), ['c-3']);
    assert.equal((await alice.search('bicycle', { session_id: 'other' })).length, 0);
    assert.equal((await alice.recent({ limit: 2 })).length, 2);

    const entry = await alice.get('c-3');
    assert.equal(entry.content, 'I ride a green bicycle to work.');
    assert.equal(entry.user_id, 'alice');
    const pinned = await alice.update('c-3', { pinned: true, importance: 0.9 });
    assert.equal(pinned.pinned, true);
    assert.equal(pinned.importance, 0.9);

    const pruned = await alice.prune({ session_id: 's1' });
    assert.equal(pruned.deleted, 2, 'the unpinned two; the pinned one stays');
    assert.ok(!pruned.ids.includes('c-3'));

    const deleted = await alice.delete('c-3');
    assert.equal(deleted.id, 'c-3');
    assert.equal(deleted.removed.long_term, true);
    await assert.rejects(alice.get('c-3'), NotFoundError);
  });

  test('chat: the reply and the memories it drew on; 503 llm_unavailable is a typed error', async () => {
    const reply = await alice.chat({ session_id: 'chat-1', message: 'Hello, remember that I like tea.' });
    assert.equal(reply.user_id, 'alice');
    assert.ok(reply.reply.length > 0);
    assert.equal(reply.provider, 'ollama');
    assert.ok(reply.turn_ids.user && reply.turn_ids.assistant);

    ollama.respond = () => ({ status: 500, body: { error: 'model crashed' } });
    try {
      const err = await alice.chat({ session_id: 'chat-1', message: 'and now?' }).then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LlmUnavailableError, String(err));
      assert.equal(err.status, 503);
      assert.equal(err.code, 'llm_unavailable');
    } finally {
      ollama.respond = (await import('../../helpers/fake-llm.js')).defaultResponder;
    }
  });

  test('error mapping: 400, 401, 403, 404, 409, 413 each as its typed error with the code and details', async () => {
    const bad = await alice.retrieve({ query: '   ' }).catch((e: unknown) => e);
    assert.ok(bad instanceof BadRequestError);
    assert.ok(bad instanceof MemoryApiError);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.details.map((d) => d.path), ['query']);
    assert.ok(bad.requestId, 'the server’s request id travels with the error');

    const stranger = new MemoryClient({ baseUrl: base, apiKey: 'not-a-valid-key-000000000', retries: 0 });
    const unauth = await stranger.recent().catch((e: unknown) => e);
    assert.ok(unauth instanceof UnauthorizedError);
    assert.equal(unauth.status, 401);

    const forbidden = await alice.retrieve({ query: 'anything', user_id: 'bob' }).catch((e: unknown) => e);
    assert.ok(forbidden instanceof ForbiddenError);
    assert.equal(forbidden.code, 'forbidden');

    const bob = new MemoryClient({ baseUrl: base, apiKey: BOB_KEY, retries: 0 });
    await bob.addTurns('b1', { id: 'bob-only', role: 'user', content: 'Bob keeps his spare key under the blue pot.' });
    await until('bob’s turn to be persisted', async () => (await bob.recent()).length === 1, 20_000);
    const hidden = await alice.get('bob-only').catch((e: unknown) => e);
    assert.ok(hidden instanceof NotFoundError, "another user's id is a 404 like an unknown one");
    assert.equal(hidden.status, 404);

    await alice.addTurns('c9', [
      { id: 'conf-a', role: 'user', content: 'My favourite colour is teal.' },
      { id: 'conf-b', role: 'user', content: 'My favourite fruit is the mango.' },
    ]);
    await until('both to be persisted', async () => (await alice.recent({ session_id: 'c9' })).length === 2, 20_000);
    // an id re-sent with other content
    const conflict = await alice.addTurns('c9', { id: 'conf-a', role: 'user', content: 'My favourite colour is green.' }).catch((e: unknown) => e);
    assert.ok(conflict instanceof ContentConflictError, String(conflict));
    assert.equal(conflict.status, 409);
    assert.match(conflict.message, /"conf-a"/);

    const huge = await alice.addTurns('c9', { role: 'user', content: 'x'.repeat(MAX_BODY + 1) }).catch((e: unknown) => e);
    assert.ok(huge instanceof PayloadTooLargeError, String(huge));
    assert.equal(huge.status, 413);
    assert.match(huge.message, new RegExp(`at most ${MAX_BODY} bytes`));
  });

  test('a timeout is a MemoryTimeoutError; a turn write that timed out is retried and stored once', async () => {
    signalService(serve, 'SIGSTOP');
    let resumed = false;
    try {
      const quick = new MemoryClient({ baseUrl: base, apiKey: ALICE_KEY, timeoutMs: 300, retries: 3 });
      const started = Date.now();
      const err = await quick.recent().catch((e: unknown) => e);
      assert.ok(err instanceof MemoryTimeoutError, String(err));
      assert.equal(err.timeoutMs, 300);
      assert.ok(Date.now() - started < 1_500, 'a read that timed out is not retried');

      const patient = new MemoryClient({ baseUrl: base, apiKey: ALICE_KEY, timeoutMs: 400, retries: 8, retryDelayMs: 100 });
      const write = patient.addTurns('t1', { role: 'user', content: 'I was written while the server was frozen.' });
      await new Promise((r) => setTimeout(r, 1_000));
      signalService(serve, 'SIGCONT');
      resumed = true;
      const result = await write;
      assert.equal(result.accepted + result.duplicates, 1);
      await until('the frozen turn to be persisted', async () => (await alice.search('while the server was frozen')).length === 1, 20_000);
      const logged = await alice.recent({ session_id: 't1' });
      assert.equal(logged.length, 1, 'every attempt carried the same id: stored once');
    } finally {
      if (!resumed) signalService(serve, 'SIGCONT');
    }
  });

  test('retries after a server restart: network errors are retried with backoff, then the write lands', async () => {
    await stop(serve);
    const down = new MemoryClient({ baseUrl: base, apiKey: ALICE_KEY, retries: 0 });
    assert.ok((await down.health().catch((e: unknown) => e)) instanceof MemoryNetworkError);

    const client = new MemoryClient({ baseUrl: base, apiKey: ALICE_KEY, retries: 12, retryDelayMs: 100 });
    const write = client.addTurns('r1', { id: 'after-restart', role: 'user', content: 'I was sent while the server restarted.' });
    const read = client.recent({ session_id: 'r1' });
    await new Promise((r) => setTimeout(r, 500));
    await start();
    assert.deepEqual((await write).ids, ['after-restart']);
    assert.ok(Array.isArray(await read), 'a read is retried on network errors too');
    await until('the turn to be persisted', async () => (await alice.recent({ session_id: 'r1' })).length === 1, 20_000);
  });

  test('the caller’s AbortSignal cancels a call, retries included', async () => {
    const client = new MemoryClient({ baseUrl: 'http://127.0.0.1:9', retries: 50, retryDelayMs: 200 });
    const abort = new AbortController();
    const pending = client.recent({}, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('caller gave up')), 300);
    await assert.rejects(pending, /caller gave up/);
  });
});
