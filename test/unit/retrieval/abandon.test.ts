// A retrieval pass whose caller stopped waiting (an HTTP client that left): the caller's signal is
// combined with each tier's budget signal, so the tiers see it aborted, the pass stops waiting for them
// at once and skips its later stages, and it rejects with a typed RequestAbortedError.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RequestAbortedError } from '../../../src/errors.js';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/app.js';
import type { ListOptions } from '../../../src/ports/long-term.js';
import type { TurnLog } from '../../../src/ports/turn-log.js';
import type { VectorIndex } from '../../../src/ports/vector-index.js';
import { Retriever, type RetrieverDeps } from '../../../src/retrieval/retrieve.js';
import { testMemory } from '../../helpers/services.js';

/** budgets no test here reaches: an abort seen by a tier is the caller's, never a budget's */
const LONG = { short_term: 20_000, semantic: 20_000, long_term: 20_000 };
/** how long the slow fakes hold their answer when nobody aborts them */
const SLOW_MS = 1_500;

/** resolves when `signal` aborts, or after SLOW_MS; tells whether it was aborted */
function heldUntilAborted(signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), SLOW_MS);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve(true);
    }, { once: true });
  });
}

interface Slow {
  /** each slow tier's signal, once it was called */
  signals: { long_term?: AbortSignal; semantic?: AbortSignal };
  entered: Promise<void>;
  tierReports: number;
  promptBlocks: number;
  retriever: Retriever;
}

/** A retriever on the real stores whose long-term text search and vector search are slow and watch their signal. */
function slowRetriever(services: Services, extra: Partial<RetrieverDeps> = {}): Slow {
  const base = services.retrieverDeps;
  let enteredBoth!: () => void;
  const slow: Slow = { signals: {}, entered: new Promise((r) => (enteredBoth = r)), tierReports: 0, promptBlocks: 0, retriever: undefined as never };
  const check = () => {
    if (slow.signals.long_term && slow.signals.semantic) enteredBoth();
  };
  const longTerm = Object.assign(Object.create(base.longTerm) as typeof base.longTerm, {
    async searchText(userId: string, query: string, o: ListOptions) {
      slow.signals.long_term = o.signal;
      check();
      if (await heldUntilAborted(o.signal)) throw o.signal!.reason;
      return base.longTerm.searchText(userId, query, o);
    },
  });
  const vectors = Object.assign(Object.create(base.vectors) as VectorIndex, {
    async search(...args: Parameters<VectorIndex['search']>) {
      const signal = args[4];
      slow.signals.semantic = signal;
      check();
      if (await heldUntilAborted(signal)) throw signal!.reason;
      return base.vectors.search(...args);
    },
  });
  const retriever = new Retriever({ ...base, longTerm, vectors, budgets: LONG, onTier: () => void slow.tierReports++, ...extra });
  const promptBlocks = retriever.promptBlocks.bind(retriever);
  retriever.promptBlocks = (results) => {
    slow.promptBlocks++;
    return promptBlocks(results);
  };
  slow.retriever = retriever;
  return slow;
}

const request = { query: 'Where do I keep my bees?', user_id: 'bee', session_id: 'hive', top_k: 5 };

describe('a retrieval pass whose caller left', () => {
  let memory: Memory;
  let services: Services;
  before(async () => {
    ({ memory, services } = await testMemory({}, { reconcile: false }));
    await memory.addTurns([
      { id: 'q', user_id: 'bee', session_id: 'hive', role: 'assistant', content: 'Where do you keep the bees?', importance: 0.9 },
      { id: 'a', user_id: 'bee', session_id: 'hive', role: 'user', content: 'on my balcony in Porto', importance: 0.9 },
      { id: 'b', user_id: 'bee', session_id: 'hive', role: 'user', content: 'The bees made honey this summer, lots of it.', importance: 0.9 },
    ]);
    await memory.idle();
    await services.embedders.ready();
  });
  after(() => memory.close());

  it('the slow tiers answer and the pass completes when nobody leaves (the fakes are sound)', async () => {
    const slow = slowRetriever(services);
    const started = performance.now();
    const r = await slow.retriever.retrieve(request, Date.now(), { signal: new AbortController().signal });
    assert.ok(performance.now() - started >= SLOW_MS - 50, 'the fakes held their answer');
    assert.equal(slow.signals.long_term?.aborted, false);
    assert.equal(slow.signals.semantic?.aborted, false);
    assert.equal(r.tiers.long_term.status, 'ok');
    assert.equal(slow.tierReports, 3);
    assert.equal(slow.promptBlocks, 1);
    assert.ok(r.results.length > 0);
  });

  it('aborts the tiers\' signals with the caller\'s reason and rejects at once with a RequestAbortedError, reporting no tier', async () => {
    const slow = slowRetriever(services);
    const caller = new AbortController();
    const pass = slow.retriever.retrieve(request, Date.now(), { signal: caller.signal });
    await slow.entered;
    const reason = new RequestAbortedError('the test client left');
    const abortedAt = performance.now();
    caller.abort(reason);
    await assert.rejects(pass, (err: unknown) => err === reason);
    const ms = performance.now() - abortedAt;
    assert.ok(ms < 1_000, `stopped ${ms.toFixed(0)} ms after the abort (the fakes hold ${SLOW_MS} ms)`);
    assert.equal(slow.signals.long_term!.aborted, true, 'the long-term tier saw its signal aborted');
    assert.equal(slow.signals.semantic!.aborted, true, 'the semantic tier saw its signal aborted');
    assert.equal(slow.signals.long_term!.reason, reason, "the caller's reason, not a spent budget");
    assert.equal(slow.tierReports, 0, 'an abandoned tier is not reported (no timeout, no error)');
    assert.equal(slow.promptBlocks, 0, 'no prompt blocks for nobody');
  });

  it('a plain abort (no reason) becomes a typed RequestAbortedError', async () => {
    const slow = slowRetriever(services);
    const caller = new AbortController();
    const pass = slow.retriever.retrieve(request, Date.now(), { signal: caller.signal });
    await slow.entered;
    caller.abort();
    await assert.rejects(pass, (err: unknown) => err instanceof RequestAbortedError && err.code === 'bad_request' && (err.cause as Error).name === 'AbortError');
  });

  it('starts no tier for a caller already gone', async () => {
    const slow = slowRetriever(services);
    const caller = new AbortController();
    caller.abort();
    await assert.rejects(slow.retriever.retrieve(request, Date.now(), { signal: caller.signal }), RequestAbortedError);
    assert.deepEqual(slow.signals, {}, 'no tier was called');
    assert.equal(slow.tierReports, 0);
  });

  it('reads context once for every hit, none for a caller gone before that stage, and builds no prompt blocks after it left', async () => {
    const turnLog = services.turnLog;
    /** a retriever (tiers as they are: they answer at once) counting context reads, the hits they read, and prompt blocks */
    const counting = (onTiers: () => void, onRead: () => void = () => {}) => {
      const n = { reads: 0, hits: 0, blocks: 0, tiers: 0 };
      const neighbours = (...args: Parameters<TurnLog['neighbours']>) => {
        n.reads++;
        n.hits += args[1].length;
        onRead();
        return turnLog.neighbours(...args);
      };
      const retriever = new Retriever({ ...services.retrieverDeps, budgets: LONG, context: { neighbours }, onTier: () => {
        if (++n.tiers === 3) onTiers();
      } });
      const promptBlocks = retriever.promptBlocks.bind(retriever);
      retriever.promptBlocks = (r) => {
        n.blocks++;
        return promptBlocks(r);
      };
      return { retriever, n };
    };
    const plain = counting(() => {});
    await plain.retriever.retrieve(request, Date.now(), { signal: new AbortController().signal });
    assert.equal(plain.n.reads, 1, 'one read for all the hits');
    assert.ok(plain.n.hits >= 2, `the query reads the neighbours of several hits when nobody leaves (${plain.n.hits})`);
    assert.equal(plain.n.blocks, 1);
    // the client leaves once the tiers have answered, before the context is read
    const gone = new AbortController();
    const before = counting(() => gone.abort());
    await assert.rejects(before.retriever.retrieve(request, Date.now(), { signal: gone.signal }), RequestAbortedError);
    assert.equal(before.n.tiers, 3, 'the tiers had answered');
    assert.equal(before.n.reads, 0, 'no neighbours read for a caller gone');
    assert.equal(before.n.blocks, 0, 'no prompt blocks');
    // the client leaves while the neighbours are read
    const caller = new AbortController();
    const left = counting(() => {}, () => caller.abort());
    await assert.rejects(left.retriever.retrieve(request, Date.now(), { signal: caller.signal }), RequestAbortedError);
    assert.equal(left.n.reads, 1);
    assert.equal(left.n.blocks, 0, 'no prompt blocks');
  });
});
