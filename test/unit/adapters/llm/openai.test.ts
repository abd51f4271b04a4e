import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LlmUnavailableError } from '../../../../src/errors.js';
import { OpenAiProvider } from '../../../../src/adapters/llm/openai.js';
import { startFakeOpenAi, type FakeLlm } from '../../../helpers/fake-llm.js';

const KEY = 'sk-test-0123456789abcdef';

describe('OpenAiProvider against a server speaking the OpenAI chat-completions protocol', () => {
  let fake: FakeLlm;
  before(async () => {
    fake = await startFakeOpenAi(undefined, { apiKey: KEY });
  });
  after(() => fake.close());

  it('posts to /v1/chat/completions with the bearer key and reads choices[0]', async () => {
    const llm = new OpenAiProvider({ baseUrl: fake.url, model: 'gpt-4o-mini', apiKey: KEY, timeoutMs: 5000 });
    const reply = await llm.chat([{ role: 'user', content: 'what is 2+2?' }], { maxTokens: 20, temperature: 0 });
    assert.equal(reply.content, 'You said: what is 2+2?');
    assert.equal(reply.provider, 'openai');
    assert.deepEqual(reply.usage, { prompt_tokens: 11, completion_tokens: 7 });
    const req = fake.chats().at(-1)!;
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(req.body, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'what is 2+2?' }], stream: false, temperature: 0, max_tokens: 20 });
  });

  it('accepts a base URL that already ends in /v1', async () => {
    const llm = new OpenAiProvider({ baseUrl: `${fake.url}/v1/`, model: 'm', apiKey: KEY, timeoutMs: 5000 });
    await llm.chat([{ role: 'user', content: 'hi' }]);
    assert.equal(fake.chats().at(-1)!.path, '/v1/chat/completions');
    assert.equal(await llm.ping(), true);
    assert.equal(fake.requests.at(-1)!.path, '/v1/models');
  });

  it('reports a refused key with the endpoint message and never the key', async () => {
    const llm = new OpenAiProvider({ baseUrl: fake.url, model: 'm', apiKey: 'sk-wrong-key-000000', timeoutMs: 5000 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), (err: unknown) => {
      assert.ok(err instanceof LlmUnavailableError);
      assert.equal(err.reason, 'http_error');
      assert.equal(err.httpStatus, 401);
      assert.match(err.message, /openai at http:\/\/127\.0\.0\.1:\d+ answered HTTP 401: Incorrect API key provided/);
      assert.doesNotMatch(err.message + JSON.stringify(err), /sk-wrong-key/);
      return true;
    });
  });

  it('rejects a completion with no choices as bad_response', async () => {
    fake.respond = () => ({ status: 200, body: { choices: [] } });
    const llm = new OpenAiProvider({ baseUrl: fake.url, model: 'm', apiKey: KEY, timeoutMs: 5000 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'bad_response' });
  });

  it('times out a server that never answers', async () => {
    fake.respond = () => 'hang';
    const llm = new OpenAiProvider({ baseUrl: fake.url, model: 'm', apiKey: KEY, timeoutMs: 150 });
    await assert.rejects(llm.chat([{ role: 'user', content: 'hi' }]), { reason: 'timeout' });
  });
});
