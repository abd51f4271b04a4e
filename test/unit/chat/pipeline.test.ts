import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Services } from '../../../src/app.js';
import { LlmUnavailableError, RequestAbortedError, ValidationError } from '../../../src/errors.js';
import { ChatPipeline, DEFAULT_SYSTEM_PROMPT } from '../../../src/chat/pipeline.js';
import type { ChatMessage, ChatOptions, ChatReply, LlmProvider } from '../../../src/ports/llm.js';
import { POPS_PER_TURN, TokenCounter } from '../../../src/compaction/tokens.js';
import { worstInputs } from '../../fixtures/token-worst.js';
import { mergingPerTurn } from '../../helpers/event-loop.js';
import { isSummaryRequest, lastUserMessage, startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { freePort } from '../../helpers/redis.js';
import { testMemory } from '../../helpers/services.js';

describe('ChatPipeline against a fake Ollama', () => {
  let ollama: FakeLlm;
  before(async () => {
    ollama = await startFakeOllama();
  });
  after(() => ollama.close());

  it('sends system prompt + memory blocks, the recent turns and the message; writes the message then the reply', async () => {
    const { services } = await testMemory({ llm_provider: 'ollama', llm_base_url: ollama.url, llm_model: 'llama3.2' });
    try {
      // something said in an earlier session, kept in long-term memory
      await services.writePath.addTurns([{ user_id: 'ada', session_id: 'old', role: 'user', content: 'My favourite colour is teal.', importance: 0.9 }]);
      await services.queue.idle();

      const first = await services.chat.chat({ session_id: 'new', user_id: 'ada', message: 'What is my favourite colour?' });
      assert.equal(first.reply, 'You said: What is my favourite colour?');
      assert.equal(first.provider, 'ollama');
      assert.equal(first.model, 'llama3.2');
      assert.ok(first.memories.some((m) => m.content === 'My favourite colour is teal.' && m.explain !== undefined));
      let sent = ollama.chats().at(-1)!.body.messages as Array<{ role: string; content: string }>;
      assert.equal(sent.length, 2);
      assert.equal(sent[0]!.role, 'system');
      assert.ok(sent[0]!.content.startsWith(DEFAULT_SYSTEM_PROMPT));
      assert.match(sent[0]!.content, /## Memory[\s\S]*My favourite colour is teal\./);
      assert.deepEqual(sent[1], { role: 'user', content: 'What is my favourite colour?' });

      const second = await services.chat.chat({ session_id: 'new', user_id: 'ada', message: 'And what should I paint?' });
      sent = ollama.chats().at(-1)!.body.messages as Array<{ role: string; content: string }>;
      assert.deepEqual(
        sent.slice(1).map((m) => [m.role, m.content]),
        [
          ['user', 'What is my favourite colour?'],
          ['assistant', 'You said: What is my favourite colour?'],
          ['user', 'And what should I paint?'],
        ],
      );
      // what the recent turns already carry is not repeated in the memory blocks
      assert.doesNotMatch(sent[0]!.content, /Recent conversation/);

      const log = await services.turnLog.session('ada', 'new');
      assert.deepEqual(
        log.map((t) => [t.id, t.role]),
        [
          [first.turn_ids.user, 'user'],
          [first.turn_ids.assistant, 'assistant'],
          [second.turn_ids.user, 'user'],
          [second.turn_ids.assistant, 'assistant'],
        ],
      );
      assert.ok(log[0]!.created_at < log[1]!.created_at);
      assert.deepEqual(log[1]!.metadata, { llm: 'ollama/llama3.2' });
    } finally {
      await services.close();
    }
  });

  // issue 25: the prompt's budget counted a 32,000-character message in one turn of the event loop
  it('counts a 32,000-character message a slice of the event loop at a time', async () => {
    const { services } = await testMemory();
    try {
      for (const [name, message] of Object.entries(worstInputs())) {
        const seen = await mergingPerTurn(async () => {
          await services.chat.preview({ session_id: 'long', user_id: 'ada', message });
        });
        // a short piece's merge (at most 64 characters) may finish a turn's work
        assert.ok(seen.most <= POPS_PER_TURN + 1_024, `${name}: ${seen.most} pops in one turn of the event loop`);
      }
    } finally {
      await services.close();
    }
  });

  it('answers llm_unavailable (503) when no LLM is configured, and writes nothing', async () => {
    const { services } = await testMemory();
    try {
      await assert.rejects(services.chat.chat({ session_id: 's', message: 'hello' }), (err: unknown) => {
        assert.ok(err instanceof LlmUnavailableError);
        assert.equal(err.status, 503);
        assert.equal(err.reason, 'not_configured');
        assert.match(err.message, /no LLM is configured: set llm_provider/);
        return true;
      });
      assert.deepEqual((await services.turnLog.session('default', 's')), []);
    } finally {
      await services.close();
    }
  });

  it('writes nothing when the LLM is unreachable', async () => {
    const port = await freePort();
    const { services } = await testMemory({ llm_provider: 'ollama', llm_base_url: `http://127.0.0.1:${port}` });
    try {
      await assert.rejects(services.chat.chat({ session_id: 's', message: 'hello' }), { name: 'LlmUnavailableError', reason: 'unreachable' });
      assert.deepEqual((await services.turnLog.session('default', 's')), []);
      assert.deepEqual(await services.shortTerm.recent('default', 's'), []);
    } finally {
      await services.close();
    }
  });

  it('refuses a bad request naming the field, before calling the LLM', async () => {
    const { services } = await testMemory({ llm_provider: 'ollama', llm_base_url: ollama.url });
    try {
      const before = ollama.chats().length;
      await assert.rejects(services.chat.chat({ session_id: 's', message: '   ' }), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.equal(err.details?.[0]?.path, 'message');
        return true;
      });
      await assert.rejects(services.chat.chat({ session_id: 's', message: 'bell \u0007' }), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.equal(err.details?.[0]?.path, 'message');
        return true;
      });
      await assert.rejects(services.chat.chat({ message: 'hi' }), (err: unknown) => err instanceof ValidationError && err.details?.[0]?.path === 'session_id');
      assert.equal(ollama.chats().length, before);
    } finally {
      await services.close();
    }
  });

  it('keeps the prompt inside the context window by dropping the oldest turns', async () => {
    const { services } = await testMemory({ llm_provider: 'ollama', llm_base_url: ollama.url, context_window: 400, compaction_threshold: 1 });
    try {
      for (let i = 0; i < 12; i++) {
        await services.chat.chat({ session_id: 'long', message: `Message number ${i} about the weather in city number ${i}, which was mild and dry.` });
      }
      const sent = ollama.chats().at(-1)!.body.messages as Array<{ role: string; content: string }>;
      const total = sent.reduce((n, m) => n + services.tokens.message(m.content), 3);
      assert.ok(total <= 400 - 100, `prompt of ${total} tokens leaves room for the reply`);
      assert.equal(lastUserMessage(ollama.chats().at(-1)!), 'Message number 11 about the weather in city number 11, which was mild and dry.');
      assert.match(sent.at(-2)!.content, /number 10/, 'the newest turns are the ones kept');
    } finally {
      await services.close();
    }
  });
});

describe('the reply and the compaction it triggers', () => {
  it('returns the reply before the compaction finishes (order of events)', async () => {
    const events: string[] = [];
    let releaseSummary!: () => void;
    const summaryGate = new Promise<void>((r) => (releaseSummary = r));
    let summaryRequested!: () => void;
    const requested = new Promise<void>((r) => (summaryRequested = r));
    const ollama = await startFakeOllama(async (req) => {
      if (!isSummaryRequest(req)) return { content: `Noted: ${lastUserMessage(req)}` };
      events.push('summary requested');
      summaryRequested();
      await summaryGate;
      return { content: '- The user described their garden.' };
    });
    const first = 'My garden has tomatoes, basil, three kinds of peppers and a small pond with frogs.';
    // the first exchange brings the session exactly to the limit, the second one over it
    const atLimit = new TokenCounter().session([
      { content: first, name: null },
      { content: `Noted: ${first}`, name: null },
    ]);
    const { services } = await testMemory({ llm_provider: 'ollama', llm_base_url: ollama.url, context_window: atLimit * 2, compaction_threshold: 0.5, compaction_keep_turns: 1 });
    services.compactor.onSettled(() => events.push('compaction settled'));
    try {
      await services.chat.chat({ session_id: 'g', message: first });
      await services.autoCompaction.idle();
      assert.equal(services.autoCompaction.counters().enqueued, 0, 'the first reply leaves the session at the limit');
      const reply = await services.chat.chat({ session_id: 'g', message: 'The plot is four by six metres and gets sun all afternoon.' });
      events.push('reply returned');
      assert.match(reply.reply, /^Noted: The plot/);

      await requested;
      assert.ok(!(await services.shortTerm.recent('default', 'g')).some((t) => t.metadata?.kind === 'summary'), 'not compacted yet');
      releaseSummary();
      await services.autoCompaction.idle();
      await services.queue.idle();
      assert.deepEqual(events, ['reply returned', 'summary requested', 'compaction settled']);
      const history = await services.shortTerm.recent('default', 'g');
      assert.equal(history[0]!.metadata?.kind, 'summary');
      assert.match(history[0]!.content, /The user described their garden/);
    } finally {
      releaseSummary();
      await services.close();
      await ollama.close();
    }
  });
});

describe('a chat whose caller left', () => {
  /** an LLM in process that counts its calls; `hold`: it answers only once its signal aborts (then rejects as the providers do) */
  function countingLlm(hold = false): LlmProvider & { calls: number } {
    const llm = {
      name: 'ollama' as const,
      model: 'counting',
      baseUrl: 'http://127.0.0.1:1',
      calls: 0,
      async chat(_messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatReply> {
        llm.calls++;
        if (hold) {
          await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
          throw new LlmUnavailableError('the call to the fake was cancelled', 'unreachable');
        }
        return { content: 'a reply', model: 'counting', provider: 'ollama', usage: { prompt_tokens: 1, completion_tokens: 1 } };
      },
      ping: async () => true,
    };
    return llm;
  }

  const pipelineOf = (services: Services, llm: LlmProvider) =>
    new ChatPipeline({ retriever: services.retriever, writePath: services.writePath, shortTerm: services.shortTerm, llm, tokens: services.tokens, log: services.log, contextWindow: services.config.context_window, maxTurnChars: services.config.max_turn_chars });

  it('does not ask the LLM once the caller left during retrieval, writes nothing, and rejects with a RequestAbortedError', async () => {
    const { services } = await testMemory({}, { reconcile: false });
    try {
      const sound = countingLlm();
      await pipelineOf(services, sound).chat({ session_id: 's0', user_id: 'ada', message: 'Hello there' }, { signal: new AbortController().signal });
      assert.equal(sound.calls, 1, 'a caller still there gets the LLM asked');
      const llm = countingLlm();
      const caller = new AbortController();
      // the client leaves once retrieval is done, before the LLM would be asked
      await assert.rejects(
        pipelineOf(services, llm).chat({ session_id: 's1', user_id: 'ada', message: 'What is my favourite colour?' }, { signal: caller.signal, onRetrieved: () => caller.abort() }),
        RequestAbortedError,
      );
      assert.equal(llm.calls, 0, 'the LLM was not asked');
      assert.deepEqual(await services.turnLog.session('ada', 's1'), [], 'nothing written');
    } finally {
      await services.close();
    }
  });

  it('a call cancelled because the caller left is no LLM failure: RequestAbortedError, nothing written', async () => {
    const { services } = await testMemory({}, { reconcile: false });
    try {
      const llm = countingLlm(true);
      const caller = new AbortController();
      const chat = pipelineOf(services, llm).chat({ session_id: 's2', user_id: 'ada', message: 'Tell me something' }, { signal: caller.signal });
      while (llm.calls === 0) await new Promise((r) => setTimeout(r, 5));
      caller.abort();
      await assert.rejects(chat, RequestAbortedError);
      assert.deepEqual(await services.turnLog.session('ada', 's2'), []);
    } finally {
      await services.close();
    }
  });
});
