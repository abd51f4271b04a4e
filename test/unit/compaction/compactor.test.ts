import { subjectOf } from '../../../src/logger.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Services } from '../../../src/app.js';
import { ConversationCompactor, type CompactorDeps } from '../../../src/compaction/compactor.js';
import { ExtractiveSummarizer } from '../../../src/compaction/summarizers/extractive.js';
import { createSummarizer } from '../../../src/compaction/summarizers/select.js';
import type { Summarizer, SummaryInput, SummaryOutput } from '../../../src/compaction/summarizers/summarizer.js';
import { parseConfig } from '../../../src/config/load.js';
import { OllamaProvider } from '../../../src/adapters/llm/ollama.js';
import type { ShortTermStore } from '../../../src/ports/short-term.js';
import { startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { testMemory } from '../../helpers/services.js';

/** a pino logger whose lines the test reads */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

/** counts calls, then defers to the extractive summarizer */
class CountingSummarizer implements Summarizer {
  readonly id = 'counting-extractive';
  calls = 0;
  constructor(private readonly inner: Summarizer) {}
  summarize(input: SummaryInput): Promise<SummaryOutput> {
    this.calls++;
    return this.inner.summarize(input);
  }
}

/** always fails, as a broken summarizer would */
class ThrowingSummarizer implements Summarizer {
  readonly id = 'throwing';
  async summarize(): Promise<SummaryOutput> {
    throw new Error('summarizer exploded');
  }
}

/** waits until the test opens the gate, then summarizes extractively */
class GatedSummarizer implements Summarizer {
  readonly id = 'gated';
  started!: Promise<void>;
  private markStarted!: () => void;
  private open!: () => void;
  private readonly gate: Promise<void>;
  constructor(private readonly inner: Summarizer) {
    this.started = new Promise((r) => (this.markStarted = r));
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open();
  }
  async summarize(input: SummaryInput): Promise<SummaryOutput> {
    this.markStarted();
    await this.gate;
    return this.inner.summarize(input);
  }
}

/** a short-term store whose next `replace` fails, as a dropped Redis connection would */
function failingReplaceOnce(store: ShortTermStore): ShortTermStore & { armed: boolean } {
  const wrapper = Object.create(store) as ShortTermStore & { armed: boolean };
  wrapper.armed = true;
  wrapper.replace = async (u, s, turns) => {
    if (wrapper.armed) {
      wrapper.armed = false;
      throw new Error('connection reset while replacing');
    }
    return store.replace(u, s, turns);
  };
  return wrapper;
}

const FACTS = [
  'My name is Ada and I live in Lisbon.',
  'Sure, Lisbon is a lovely city.',
  'I have two cats called Pixel and Byte.',
  'Pixel and Byte are great names.',
  'My sister Grace visits on 12 May every year.',
  'That is a nice tradition.',
  'I work on compilers at Acme since 2019.',
  'Compilers are fascinating work.',
  'Please remember that I am allergic to peanuts.',
  'Noted: no peanuts.',
];

describe('ConversationCompactor', () => {
  let services: Services;
  let n = 0;
  before(async () => {
    ({ services } = await testMemory({ short_term_max_turns: 200 }));
  });
  after(() => services.close());

  /** a fresh session of the ten FACTS turns (the third one pinned) */
  async function session(): Promise<{ user: string; session: string; ids: string[] }> {
    const user = `u${++n}`;
    const sessionId = `s${n}`;
    const r = await services.writePath.addTurns(
      FACTS.map((content, i) => ({ user_id: user, session_id: sessionId, role: i % 2 === 0 ? 'user' : 'assistant', content, pinned: i === 2 })),
    );
    await services.queue.idle();
    return { user, session: sessionId, ids: r.ids };
  }

  function compactor(over: Partial<CompactorDeps> = {}): ConversationCompactor {
    return new ConversationCompactor({
      shortTerm: services.shortTerm,
      turnLog: services.turnLog,
      longTerm: services.longTerm,
      queue: services.queue,
      tokens: services.tokens,
      summarizer: new ExtractiveSummarizer(services.tokens),
      log: pino({ level: 'silent' }),
      keepTurns: 2,
      summaryMaxTokens: 200,
      limitTokens: 500,
      ...over,
    });
  }

  async function summaries(user: string): Promise<string[]> {
    return (await services.longTerm.recent(user, { limit: 100 })).filter((e) => e.kind === 'summary').map((e) => e.id);
  }

  it('replaces the history with [summary, pinned, newest turns] and persists the summary with what it covers', async () => {
    const s = await session();
    const r = await compactor().compact(s.user, s.session);
    assert.equal(r.status, 'compacted');
    assert.equal(r.source, 'short_term');
    const expectedCovers = s.ids.filter((_, i) => i !== 2 && i < 8);
    assert.deepEqual(r.covers, expectedCovers);
    assert.equal(r.summarized, 7);
    assert.equal(r.kept, 3);
    assert.ok(r.tokens_after < r.tokens_before);

    const history = await services.shortTerm.recent(s.user, s.session);
    assert.deepEqual(
      history.map((t) => t.id),
      [r.summary_id, s.ids[2], s.ids[8], s.ids[9]],
    );
    assert.equal(history[0]!.role, 'system');
    assert.equal(history[0]!.metadata?.kind, 'summary');
    assert.equal(history[0]!.kind, 'summary', 'the kind is a field of the turn, not only of its metadata');
    // the extractive summary keeps the sentences with names and numbers
    assert.match(history[0]!.content, /- user: My sister Grace visits on 12 May every year\./);

    const entry = await services.longTerm.get(s.user, r.summary_id!);
    assert.equal(entry?.kind, 'summary');
    assert.deepEqual(entry?.covers, expectedCovers);
    assert.equal(entry?.content, history[0]!.content);
    assert.equal(entry?.created_at, (await services.turnLog.get(s.user, s.ids[7]!))!.created_at, 'it stands where the last covered turn stood');

    await services.queue.idle();
    const embedder = (await services.embedders.ready())!;
    assert.deepEqual([...(await services.vectors.has(embedder, s.user, [r.summary_id!]))], [r.summary_id], 'the embed job of the summary ran');
    // the summary is found like any memory, with its kind
    const found = await services.retriever.retrieve({ query: 'when does Grace visit?', user_id: s.user, top_k: 8 });
    assert.ok(found.results.some((x) => x.id === r.summary_id && x.kind === 'summary'));
  });

  it('is idempotent: compacting again finds nothing left to summarize and writes nothing', async () => {
    const s = await session();
    const c = compactor();
    const first = await c.compact(s.user, s.session);
    const again = await c.compact(s.user, s.session);
    assert.equal(again.status, 'nothing_to_compact');
    assert.deepEqual(await summaries(s.user), [first.summary_id]);
  });

  it('a retried job after a failure mid-way reuses the stored summary (same id, no second summary)', async () => {
    const s = await session();
    const counting = new CountingSummarizer(new ExtractiveSummarizer(services.tokens));
    const flaky = failingReplaceOnce(services.shortTerm);
    const before = await services.shortTerm.recent(s.user, s.session);
    await assert.rejects(compactor({ shortTerm: flaky, summarizer: counting }).compact(s.user, s.session), /connection reset/);
    assert.deepEqual(await services.shortTerm.recent(s.user, s.session), before, 'the history is untouched');
    const stored = await summaries(s.user);
    assert.equal(stored.length, 1, 'the summary was persisted before the failure');

    const retried = await compactor({ shortTerm: flaky, summarizer: counting }).compact(s.user, s.session);
    assert.equal(retried.status, 'compacted');
    assert.equal(retried.summary_id, stored[0]);
    assert.equal(counting.calls, 1, 'the stored summary was reused, not written again');
    assert.deepEqual(await summaries(s.user), stored);
  });

  it('folds an earlier summary into the next one, which then covers both stretches', async () => {
    const s = await session();
    const c = compactor();
    const first = await c.compact(s.user, s.session);
    const more = await services.writePath.addTurns([
      { user_id: s.user, session_id: s.session, role: 'user', content: 'My favourite editor is Emacs, version 29.' },
      { user_id: s.user, session_id: s.session, role: 'assistant', content: 'Emacs 29 has tree-sitter support.' },
      { user_id: s.user, session_id: s.session, role: 'user', content: 'I moved to Porto in June 2024.' },
    ]);
    const second = await c.compact(s.user, s.session);
    assert.equal(second.status, 'compacted');
    assert.notEqual(second.summary_id, first.summary_id);
    assert.deepEqual(second.covers, [...first.covers, s.ids[8], s.ids[9], more.ids[0]]);
    const history = await services.shortTerm.recent(s.user, s.session);
    assert.equal(history.filter((t) => t.metadata?.kind === 'summary').length, 1);
    assert.deepEqual(history.map((t) => t.id), [second.summary_id, s.ids[2], more.ids[1], more.ids[2]]);
  });

  it('reads the turn log when the short-term tier holds nothing, skipping what a summary covers', async () => {
    const s = await session();
    await services.shortTerm.clear(s.user, s.session);
    const c = compactor();
    const r = await c.compact(s.user, s.session);
    assert.equal(r.source, 'turn_log');
    assert.equal(r.status, 'compacted');
    assert.equal(r.summarized, 7);
    assert.deepEqual((await services.shortTerm.recent(s.user, s.session)).map((t) => t.id), [r.summary_id, s.ids[2], s.ids[8], s.ids[9]]);

    await services.shortTerm.clear(s.user, s.session);
    const again = await c.compact(s.user, s.session);
    assert.equal(again.source, 'turn_log');
    assert.equal(again.status, 'nothing_to_compact', 'covered turns are not summarized twice');
  });

  it('keeps the turns that arrive while the summarizer runs', async () => {
    const s = await session();
    const gated = new GatedSummarizer(new ExtractiveSummarizer(services.tokens));
    const running = compactor({ summarizer: gated }).compact(s.user, s.session);
    await gated.started;
    const late = await services.writePath.addTurns([{ user_id: s.user, session_id: s.session, role: 'user', content: 'One more thing: I play the cello.' }]);
    gated.release();
    const r = await running;
    const history = await services.shortTerm.recent(s.user, s.session);
    assert.equal(history.at(-1)!.id, late.ids[0]);
    assert.ok(!r.covers.includes(late.ids[0]!));
  });

  it('joins a compaction of the same session that is already running', async () => {
    const s = await session();
    const gated = new GatedSummarizer(new ExtractiveSummarizer(services.tokens));
    const c = compactor({ summarizer: gated });
    const a = c.compact(s.user, s.session);
    const b = c.compact(s.user, s.session);
    assert.equal(a, b);
    gated.release();
    await a;
    assert.equal(c.counters().runs, 1);
  });

  it('a failing summarizer leaves the session as it was, usable, and is logged and counted', async () => {
    const s = await session();
    const { log, lines } = recordingLogger();
    const c = compactor({ summarizer: new ThrowingSummarizer(), log });
    const before = await services.shortTerm.recent(s.user, s.session);
    await assert.rejects(c.compact(s.user, s.session), /summarizer exploded/);
    assert.deepEqual(await services.shortTerm.recent(s.user, s.session), before);
    assert.deepEqual(await summaries(s.user), []);
    assert.equal(c.counters().failures, 1);
    const logged = lines.find((l) => l.msg === 'compaction failed; the session is unchanged');
    assert.equal(logged?.err, 'summarizer exploded');
    // which session, as a digest: logs never name users or sessions (they outlive an erasure)
    assert.equal(logged?.subject, subjectOf(s.user, s.session));
    assert.equal(logged?.session_id, undefined);
    // the session goes on: writes and retrieval work
    await services.writePath.addTurns([{ user_id: s.user, session_id: s.session, role: 'user', content: 'Still here, talking about Lisbon.' }]);
    const found = await services.retriever.retrieve({ query: 'Lisbon', user_id: s.user, session_id: s.session, top_k: 8 });
    assert.ok(found.results.length > 0);
  });

  it('falls back to the extractive summarizer when the LLM fails, and logs it', async () => {
    const fake: FakeLlm = await startFakeOllama(() => ({ status: 500, body: { error: 'out of memory' } }));
    try {
      const s = await session();
      const { log, lines } = recordingLogger();
      const llm = new OllamaProvider({ baseUrl: fake.url, model: 'm', timeoutMs: 2000 });
      const summarizer = createSummarizer(parseConfig({ compaction_summarizer: 'auto' }), llm, services.tokens, log);
      const r = await compactor({ summarizer }).compact(s.user, s.session);
      assert.equal(r.status, 'compacted');
      assert.equal(r.summarizer, 'extractive');
      assert.equal(fake.chats().length, 1);
      const warned = lines.find((l) => l.msg === 'summarizer failed; using the fallback');
      assert.match(String(warned?.err), /HTTP 500: out of memory/);
    } finally {
      await fake.close();
    }
  });

  it('uses the LLM summary when the LLM answers', async () => {
    const fake = await startFakeOllama(() => ({ content: '- Ada lives in Lisbon and has two cats, Pixel and Byte.' }));
    try {
      const s = await session();
      const llm = new OllamaProvider({ baseUrl: fake.url, model: 'llama3.2', timeoutMs: 2000 });
      const summarizer = createSummarizer(parseConfig({}), llm, services.tokens, pino({ level: 'silent' }));
      const r = await compactor({ summarizer }).compact(s.user, s.session);
      assert.equal(r.summarizer, 'llm:ollama/llama3.2');
      assert.match(r.summary!, /^Summary of the earlier conversation \(session s\d+, 7 turns up to \d{4}-\d\d-\d\dT\d\d:\d\dZ\):\n- Ada lives in Lisbon/);
      const transcript = String(fake.chats()[0]!.body.messages[1].content);
      assert.match(transcript, /^user: My name is Ada/);
      assert.doesNotMatch(transcript, /allergic to peanuts/, 'the kept turns are not summarized');
      assert.doesNotMatch(transcript, /two cats called Pixel/, 'the pinned turn is not summarized');
    } finally {
      await fake.close();
    }
  });

  it('stores summaries of two sessions even when the summarizer writes the same words for both', async () => {
    const constant: Summarizer = { id: 'constant', summarize: async () => ({ text: '- They talked about cats.', by: 'constant' }) };
    const a = await session();
    const b = await session();
    // both sessions under one user: their summaries differ by the heading that names the session
    const moved = await services.turnLog.session(b.user, b.session);
    await services.writePath.addTurns(moved.map((t, i) => ({ user_id: a.user, session_id: 'second', role: t.role, content: `${t.content} (${i})`, pinned: t.pinned })));
    const first = await compactor({ summarizer: constant }).compact(a.user, a.session);
    const second = await compactor({ summarizer: constant }).compact(a.user, 'second');
    assert.notEqual(first.summary, second.summary);
    assert.deepEqual((await summaries(a.user)).sort(), [first.summary_id, second.summary_id].sort());
  });

  it('on a threshold job, does nothing while the session is under the limit', async () => {
    const s = await session();
    const r = await compactor({ limitTokens: 10_000 }).compact(s.user, s.session, 'threshold');
    assert.equal(r.status, 'below_threshold');
    assert.deepEqual(await summaries(s.user), []);
  });

  it('writes nothing about a session erased while it was being read', async () => {
    const s = await session();
    await services.turnLog.deleteWhere(s.user, s.session);
    const r = await compactor().compact(s.user, s.session);
    assert.equal(r.status, 'session_gone');
    assert.deepEqual(await summaries(s.user), []);
  });
});

