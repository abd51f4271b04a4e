import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LlmUnavailableError } from '../../../../src/errors.js';
import { OllamaProvider } from '../../../../src/adapters/llm/ollama.js';
import { startFakeOllama, type FakeLlm } from '../../../helpers/fake-llm.js';
import { freePort } from '../../../helpers/redis.js';

describe('OllamaProvider against a server speaking the Ollama chat protocol', () => {
  let fake: FakeLlm;
  before(async () => {
    fake = await startFakeOllama();
  });
  after(() => fake.close());

  it('posts to /api/chat with stream false and reads the reply and token counts', async () => {
    const llm = new OllamaProvider({ baseUrl: `${fake.url}/`, model: 'llama3.2', timeoutMs: 5000 });
    const reply = await llm.chat(
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
      { temperature: 0.2, maxTokens: 64 },
    );
    assert.equal(reply.content, 'You said: hello there');
    assert.equal(reply.provider, 'ollama');
    assert.equal(reply.model, 'llama3.2');
    assert.deepEqual(reply.usage, { prompt_tokens: 11, completion_tokens: 7 });
    const req = fake.chats().at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/api/chat'); // the trailing slash of the base is not doubled
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(req.body, {
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
      stream: false,
      options: { temperature: 0.2, num_predict: 64 },
    });
  });

  it('turns an Ollama error body into llm_unavailable naming the endpoint and the error', async () => {
    fake.respond = () => ({ status: 404, body: { error: "model 'nope' not found, try pulling it first" } });
    const llm = new OllamaProvider({ baseUrl: fake.url, model: 'nope', timeoutMs: 5000 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), (err: unknown) => {
      assert.ok(err instanceof LlmUnavailableError);
      assert.equal(err.code, 'llm_unavailable');
      assert.equal(err.status, 503);
      assert.equal(err.reason, 'http_error');
      assert.equal(err.httpStatus, 404);
      assert.match(err.message, /ollama at http:\/\/127\.0\.0\.1:\d+ answered HTTP 404: model 'nope' not found/);
      return true;
    });
  });

  it('rejects an answer that is not JSON, or holds no message, as bad_response', async () => {
    const llm = new OllamaProvider({ baseUrl: fake.url, model: 'm', timeoutMs: 5000 });
    fake.respond = () => ({ raw: '<html>proxy error</html>' });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { name: 'LlmUnavailableError', reason: 'bad_response' });
    fake.respond = () => ({ status: 200, body: { model: 'm', done: true } });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'bad_response', message: /no message content/ });
    fake.respond = () => ({ content: '   ' });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'bad_response' });
  });

  it('gives up after llm_timeout_ms when the server never answers', async () => {
    fake.respond = () => 'hang';
    const llm = new OllamaProvider({ baseUrl: fake.url, model: 'm', timeoutMs: 150 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'timeout', message: /did not answer within 150 ms \(llm_timeout_ms\)/ });
  });

  it('reports a closed port as unreachable, with the socket error', async () => {
    const port = await freePort();
    const llm = new OllamaProvider({ baseUrl: `http://127.0.0.1:${port}`, model: 'm', timeoutMs: 5000 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'unreachable', message: /not reachable: .*ECONNREFUSED/ });
    assert.equal(await llm.ping(500), false);
  });

  it('is cancelled by the caller signal', async () => {
    fake.respond = () => 'hang';
    const llm = new OllamaProvider({ baseUrl: fake.url, model: 'm', timeoutMs: 10_000 });
    const ctl = new AbortController();
    const call = llm.chat([{ role: 'user', content: 'hi' }], { signal: ctl.signal });
    ctl.abort();
    await assert.rejects(call, { name: 'LlmUnavailableError', message: /cancelled/ });
  });

  it('pings GET /api/tags', async () => {
    const llm = new OllamaProvider({ baseUrl: fake.url, model: 'm', timeoutMs: 5000 });
    assert.equal(await llm.ping(), true);
    assert.equal(fake.requests.at(-1)!.path, '/api/tags');
  });
});
