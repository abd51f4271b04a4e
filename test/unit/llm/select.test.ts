import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { parseConfig } from '../../../src/config/load.js';
import { OPENAI_DEFAULT_BASE_URL, OPENAI_DEFAULT_MODEL, selectLlm } from '../../../src/llm/select.js';
import { startFakeOllama, startFakeOpenAi, isSummaryRequest, type FakeLlm } from '../../helpers/fake-llm.js';
import { testMemory } from '../../helpers/services.js';

const quiet = pino({ level: 'silent' });

/** a logger whose warnings the test can read */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

describe('selectLlm', () => {
  it('selects nothing when no LLM is configured, and says what follows', () => {
    const s = selectLlm(parseConfig({}), quiet);
    assert.equal(s.provider, null);
    assert.equal(s.describe().provider, 'none');
    assert.match(s.describe().summary, /\/chat answers 503.*extractive/);
  });

  it('sends Ollama calls to llm_base_url, else ollama_url, with llm_model, else ollama_model', () => {
    const a = selectLlm(parseConfig({ llm_provider: 'ollama' }), quiet);
    assert.equal(a.provider?.name, 'ollama');
    assert.equal(a.provider?.baseUrl, 'http://127.0.0.1:11434');
    assert.equal(a.provider?.model, 'llama3.2');
    const b = selectLlm(parseConfig({ llm_provider: 'ollama', llm_base_url: 'http://127.0.0.1:9999', llm_model: 'qwen2.5' }), quiet);
    assert.equal(b.provider?.baseUrl, 'http://127.0.0.1:9999');
    assert.equal(b.provider?.model, 'qwen2.5');
  });

  it('defaults an OpenAI-compatible provider to the OpenAI API and a small model', () => {
    const s = selectLlm(parseConfig({ llm_provider: 'openai' }), quiet);
    assert.equal(s.provider?.name, 'openai');
    assert.equal(s.provider?.baseUrl, OPENAI_DEFAULT_BASE_URL);
    assert.equal(s.provider?.model, OPENAI_DEFAULT_MODEL);
    assert.match(s.describe().summary, /no llm_api_key set/);
  });

  it('in privacy mode sends every call to the local Ollama whatever else is configured, and says so', () => {
    const config = parseConfig({
      privacy_mode: true,
      llm_provider: 'openai',
      llm_base_url: 'https://api.example.com',
      llm_model: 'gpt-4o',
      llm_api_key: 'sk-secret-secret',
      ollama_url: 'http://127.0.0.1:11500',
      ollama_model: 'mistral',
    });
    const s = selectLlm(config, quiet);
    assert.equal(s.provider?.name, 'ollama');
    assert.equal(s.provider?.baseUrl, 'http://127.0.0.1:11500');
    assert.equal(s.provider?.model, 'mistral'); // an OpenAI model name means nothing to Ollama
    const d = s.describe();
    assert.equal(d.privacy_mode, true);
    assert.equal(d.configured_provider, 'openai');
    assert.match(d.summary, /privacy mode: every LLM call goes to this local Ollama \(the configured openai endpoint https:\/\/api\.example\.com is not used\)/);
    // even with no provider configured, privacy mode means the local Ollama
    assert.equal(selectLlm(parseConfig({ privacy_mode: true }), quiet).provider?.name, 'ollama');
    // an Ollama provider keeps its model but not its base URL
    const o = selectLlm(parseConfig({ privacy_mode: true, llm_provider: 'ollama', llm_model: 'phi3', llm_base_url: 'http://10.0.0.5:11434' }), quiet);
    assert.equal(o.provider?.baseUrl, 'http://127.0.0.1:11434');
    assert.equal(o.provider?.model, 'phi3');
  });

  it('warns when privacy mode points at an Ollama that is not on this machine', () => {
    const { log, lines } = recordingLogger();
    const s = selectLlm(parseConfig({ privacy_mode: true, ollama_url: 'http://ollama.lan:11434' }), log);
    assert.match(s.describe().summary, /not a loopback address/);
    assert.ok(lines.some((l) => /not a loopback address/.test(String(l.msg))));
  });
});

describe('privacy mode, end to end', () => {
  let ollama: FakeLlm;
  let openai: FakeLlm;
  before(async () => {
    [ollama, openai] = await Promise.all([startFakeOllama(), startFakeOpenAi()]);
  });
  after(async () => {
    await Promise.all([ollama.close(), openai.close()]);
  });

  it('sends nothing to the configured OpenAI endpoint: chat and compaction both go to the local Ollama', async () => {
    const { services } = await testMemory({
      privacy_mode: true,
      llm_provider: 'openai',
      llm_base_url: openai.url,
      llm_api_key: 'sk-test-0123456789',
      ollama_url: ollama.url,
      // a tiny window, so two exchanges cross the threshold and the LLM summarizer runs too
      context_window: 128,
      compaction_threshold: 0.5,
      compaction_keep_turns: 1,
    });
    try {
      for (const message of ['My name is Ada and I live in Lisbon with two cats named Pixel and Byte.', 'I work on compilers at a small company since 2019, mostly on register allocation.']) {
        await services.chat.chat({ session_id: 's1', user_id: 'ada', message });
      }
      await services.autoCompaction.idle();
      await services.queue.idle();
      assert.equal(openai.requests.length, 0, 'no request of any kind reached the OpenAI endpoint');
      assert.equal(ollama.chats().filter((r) => !isSummaryRequest(r)).length, 2);
      assert.ok(ollama.chats().some(isSummaryRequest), 'the compaction summary came from the local Ollama');
      assert.equal(services.compactor.counters().compacted, 1);
    } finally {
      await services.close();
    }
  });
});
