import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { freePort } from '../../helpers/redis.js';
import { startApi, storeDigest, type Api } from '../api/harness.js';

const ADMIN = 'admin-key-0123456789abcdef';
const ALICE = 'alice-key-0123456789abcdef';

describe('POST /chat against a fake Ollama', () => {
  let ollama: FakeLlm;
  let api: Api;
  before(async () => {
    ollama = await startFakeOllama();
    api = await startApi({
      llm_provider: 'ollama',
      llm_base_url: ollama.url,
      api_keys: [
        { key: ADMIN, users: ['*'] },
        { key: ALICE, users: ['alice'] },
      ],
    });
  });
  after(async () => {
    await api.close();
    await ollama.close();
  });

  it('answers with the reply, the turn ids and the memories used, and stores both turns', async () => {
    await api.request('POST', '/sessions/earlier/turns', { key: ALICE, body: { content: 'I keep bees on my balcony in Porto.', role: 'user', importance: 0.9 } });
    await api.memory.idle();
    const r = await api.request('POST', '/chat', { key: ALICE, body: { session_id: 'now', message: 'Where are my bees?' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.reply, 'You said: Where are my bees?');
    assert.equal(r.json.user_id, 'alice', "the key's only user");
    assert.equal(r.json.session_id, 'now');
    assert.ok(r.json.memories.some((m: { content: string; explain: unknown }) => m.content === 'I keep bees on my balcony in Porto.' && m.explain));
    assert.match(r.json.prompt_blocks, /bees on my balcony/);
    const stored = await api.services.turnLog.session('alice', 'now');
    assert.deepEqual(stored.map((t) => [t.id, t.role, t.content]), [
      [r.json.turn_ids.user, 'user', 'Where are my bees?'],
      [r.json.turn_ids.assistant, 'assistant', 'You said: Where are my bees?'],
    ]);
  });

  it('refuses a chat for another user (403) and a bad body (400 naming the field), writing nothing', async () => {
    const before = await storeDigest(api, ['alice', 'bob']);
    const calls = ollama.chats().length;
    const forbidden = await api.request('POST', '/chat', { key: ALICE, body: { session_id: 's', user_id: 'bob', message: 'hi' } });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.json.error.code, 'forbidden');
    const bad = await api.request('POST', '/chat', { key: ALICE, body: { session_id: 's', message: '' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'bad_request');
    assert.equal(bad.json.error.details[0].path, 'message');
    const unknown = await api.request('POST', '/chat', { key: ALICE, body: { session_id: 's', message: 'hi', temperature: 2 } });
    assert.equal(unknown.status, 400);
    const noKey = await api.request('POST', '/chat', { body: { session_id: 's', message: 'hi' } });
    assert.equal(noKey.status, 401);
    assert.equal(ollama.chats().length, calls, 'the LLM was not asked');
    assert.equal(await storeDigest(api, ['alice', 'bob']), before);
  });

  it('answers 503 llm_unavailable with a clear message when the LLM is down, writing nothing', async () => {
    ollama.respond = () => ({ status: 500, body: { error: 'model runner crashed' } });
    try {
      const r = await api.request('POST', '/chat', { key: ADMIN, body: { session_id: 'down', user_id: 'carol', message: 'hello?' } });
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'llm_unavailable');
      assert.match(r.json.error.message, /ollama at http:\/\/127\.0\.0\.1:\d+ answered HTTP 500: model runner crashed/);
      assert.deepEqual((await api.services.turnLog.session('carol', 'down')), []);
    } finally {
      ollama.respond = (req) => ({ content: `You said: ${(req.body.messages as Array<{ content: string }>).at(-1)!.content}` });
    }
  });

  it('is documented in /openapi.json', async () => {
    const r = await api.request('GET', '/openapi.json', { key: ADMIN });
    assert.equal(r.status, 200);
    assert.ok(r.json.paths['/chat']?.post);
  });
});

describe('POST /chat with no LLM', () => {
  it('answers 503 with what to configure, while the memory routes work', async () => {
    const api = await startApi();
    try {
      const r = await api.request('POST', '/chat', { body: { session_id: 's', message: 'hello' } });
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'llm_unavailable');
      assert.match(r.json.error.message, /no LLM is configured: set llm_provider/);
      const turns = await api.request('POST', '/sessions/s/turns', { body: { role: 'user', content: 'still stored' } });
      assert.equal(turns.status, 202);
      const retrieve = await api.request('POST', '/memory/retrieve', { body: { query: 'stored', session_id: 's' } });
      assert.equal(retrieve.status, 200);
    } finally {
      await api.close();
    }
  });

  it('answers 503 when the configured Ollama is not running', async () => {
    const port = await freePort();
    const api = await startApi({ llm_provider: 'ollama', llm_base_url: `http://127.0.0.1:${port}` });
    try {
      const r = await api.request('POST', '/chat', { body: { session_id: 's', message: 'hello' } });
      assert.equal(r.status, 503);
      assert.match(r.json.error.message, /not reachable: .*ECONNREFUSED/);
    } finally {
      await api.close();
    }
  });
});
