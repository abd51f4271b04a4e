import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { InProcessQueue } from '../../../src/adapters/in-process/queue.js';
import { AutoCompactor } from '../../../src/compaction/auto.js';
import { POPS_PER_TURN, TokenCounter } from '../../../src/compaction/tokens.js';
import { worstInputs } from '../../fixtures/token-worst.js';
import { mergingPerTurn } from '../../helpers/event-loop.js';
import { InProcessShortTermStore } from '../../../src/adapters/in-process/short-term.js';
import { createProcessors } from '../../../workers/processors.js';
import { testMemory } from '../../helpers/services.js';

const EXCHANGES = [
  ['I am planning a garden with tomatoes, basil and three kinds of peppers.', 'Tomatoes and basil grow well together; peppers like the same sun.'],
  ['The plot is 4 by 6 metres and gets sun from 10 am to 5 pm.', 'That is enough light for all of them; leave 50 cm between tomato plants.'],
  ['Should I water in the morning or the evening?', 'Morning watering is better: the leaves dry during the day.'],
  ['What about slugs? Last year they ate all my lettuce.', 'Copper tape around the beds and beer traps both help against slugs.'],
] as const;

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

describe('auto-compaction', () => {
  it('decides below the limit without tokenizing while the byte bound is below it, and by the count once it is not', async () => {
    class Counting extends TokenCounter {
      encoded = 0;
      override count(text: string): number {
        this.encoded++;
        return super.count(text);
      }
    }
    const shortTerm = new InProcessShortTermStore({ ttlSeconds: 60, maxTurns: 50 });
    const queue = new InProcessQueue(pino({ level: 'silent' }));
    const history = EXCHANGES.flat().map((content, i) => ({ content, role: i % 2 ? ('assistant' as const) : ('user' as const) }));
    await shortTerm.push(
      history.map((h, i) => ({ id: `t${i}`, user_id: 'u', session_id: 's', role: h.role, name: null, content: h.content, content_hash: String(i), created_at: new Date(1_700_000_000_000 + i).toISOString(), importance: null, pinned: false, metadata: null })),
    );
    const tokens = new Counting();
    const exact = tokens.session(history.map((h) => ({ content: h.content, name: null })));
    const bound = tokens.sessionAtMost(history.map((h) => ({ content: h.content, name: null })));
    assert.ok(bound > exact);
    const check = (limitTokens: number) => new AutoCompactor({ shortTerm, queue, tokens, log: pino({ level: 'silent' }), limitTokens }).check('u', 's');
    try {
      tokens.encoded = 0;
      assert.equal(await check(bound), 'below_threshold');
      assert.equal(tokens.encoded, 0, 'under the byte bound: nothing tokenized');
      // between the exact count and the bound: the count decides, as it did without the bound
      assert.equal(await check(exact), 'below_threshold');
      assert.ok(tokens.encoded > 0);
      assert.equal(await check(exact - 1), 'enqueued');
    } finally {
      await queue.close();
      await shortTerm.close();
    }
  });

  // issue 25: the check after a reply counted the new reply (32,000 characters: its message was counted
  // by the prompt) in one turn of the event loop
  it('counts a session of 32,000-character turns a slice of the event loop at a time', async () => {
    const shortTerm = new InProcessShortTermStore({ ttlSeconds: 60, maxTurns: 50 });
    const queue = new InProcessQueue(pino({ level: 'silent' }));
    const contents = Object.values(worstInputs());
    await shortTerm.push(
      contents.map((content, i) => ({ id: `w${i}`, user_id: 'u', session_id: 'w', role: i % 2 ? ('assistant' as const) : ('user' as const), name: null, content, content_hash: String(i), created_at: new Date(1_700_000_000_000 + i).toISOString(), importance: null, pinned: false, metadata: null })),
    );
    const exact = new TokenCounter().session(contents.map((content) => ({ content, name: null })));
    try {
      for (const [limitTokens, outcome] of [[exact, 'below_threshold'], [exact - 1, 'enqueued']] as const) {
        const auto = new AutoCompactor({ shortTerm, queue, tokens: new TokenCounter(), log: pino({ level: 'silent' }), limitTokens });
        let got = '';
        const seen = await mergingPerTurn(async () => {
          got = await auto.check('u', 'w');
        });
        assert.equal(got, outcome);
        // a short piece's merge (at most 64 characters) may finish a turn's work
        assert.ok(seen.most <= POPS_PER_TURN + 1_024, `${seen.most} pops in one turn of the event loop`);
      }
    } finally {
      await queue.close();
      await shortTerm.close();
    }
  });

  it('enqueues exactly when a reply takes the session over the threshold, not before, and once while it waits', async () => {
    // the limit is set to the estimate after two exchanges: reaching it is not exceeding it
    const tokens = new TokenCounter();
    const twoExchanges = EXCHANGES.slice(0, 2).flat().map((content) => ({ content, name: null }));
    const limit = tokens.session(twoExchanges);
    const { services } = await testMemory({ context_window: limit * 4, compaction_threshold: 0.25, compaction_keep_turns: 2 }, { runWorkers: false, reconcile: false });
    const waiting = async () => (await services.queue.counts()).compact.waiting;
    const say = async (role: 'user' | 'assistant', content: string) => {
      await services.writePath.addTurns([{ user_id: 'gardener', session_id: 'g1', role, content }]);
      await services.autoCompaction.idle();
    };
    try {
      for (const [question, answer] of EXCHANGES.slice(0, 2)) {
        await say('user', question);
        await say('assistant', answer);
      }
      assert.equal(services.tokens.session(await services.shortTerm.recent('gardener', 'g1')), limit, 'the session sits exactly at the limit');
      assert.equal(await waiting(), 0, 'at the limit: no compaction');

      await say('user', EXCHANGES[2][0]);
      assert.equal(await waiting(), 0, 'over the limit, but no reply yet: no check');
      await say('assistant', EXCHANGES[2][1]);
      assert.equal(await waiting(), 1, 'the reply that crossed the limit enqueued one compaction');
      assert.deepEqual(services.autoCompaction.counters(), { checks: 3, enqueued: 1, in_flight: 0, failures: 0 });

      await say('user', EXCHANGES[3][0]);
      await say('assistant', EXCHANGES[3][1]);
      assert.equal(await waiting(), 1, 'a second trigger while one waits adds nothing');
      assert.equal(services.autoCompaction.counters().in_flight, 1);

      // another process (its own guard, the same queue) names the same job: the queue adds it once
      const other = new AutoCompactor({ shortTerm: services.shortTerm, queue: services.queue, tokens, log: pino({ level: 'silent' }), limitTokens: limit });
      assert.equal(await other.check('gardener', 'g1'), 'enqueued');
      assert.equal(await waiting(), 1);

      // the compaction runs; the session shrinks below the limit and the guard is released
      await services.queue.consume(createProcessors(services.processorDeps), { queues: ['compact', 'embed', 'persist'], concurrency: 2 });
      await services.queue.idle();
      const history = await services.shortTerm.recent('gardener', 'g1');
      assert.equal(history[0]!.metadata?.kind, 'summary');
      assert.ok(services.tokens.session(history) <= limit);
      assert.equal(services.compactor.counters().compacted, 1);

      // growing past the limit again starts a new compaction
      for (const [question, answer] of EXCHANGES) {
        await say('user', question);
        await say('assistant', answer);
      }
      await services.queue.idle();
      assert.ok(services.compactor.counters().compacted >= 2);
      assert.equal(services.compactor.counters().failures, 0);
    } finally {
      await services.close();
    }
  });

  it('checks only sessions that got a reply, and returns before checking', async () => {
    const shortTerm = new InProcessShortTermStore({ ttlSeconds: 60, maxTurns: 50 });
    const queue = new InProcessQueue(pino({ level: 'silent' }));
    const auto = new AutoCompactor({ shortTerm, queue, tokens: new TokenCounter(), log: pino({ level: 'silent' }), limitTokens: 1 });
    const turn = (role: 'user' | 'assistant', session: string) => ({
      id: `${session}-${role}`,
      user_id: 'u',
      session_id: session,
      role,
      name: null,
      content: 'a long enough text to go over one token',
      content_hash: 'h',
      created_at: new Date().toISOString(),
      importance: null,
      pinned: false,
      metadata: null,
    });
    const turns = [turn('user', 'a'), turn('user', 'b'), turn('assistant', 'b')];
    await shortTerm.push(turns);
    auto.onAccepted(turns);
    assert.equal(auto.counters().checks, 0, 'nothing ran inside the hook');
    await auto.idle();
    assert.deepEqual(auto.counters(), { checks: 1, enqueued: 1, in_flight: 0, failures: 0 });
    await queue.close();
  });

  it('logs, counts and swallows a failing check; the hook never throws', async () => {
    const shortTerm = new InProcessShortTermStore({ ttlSeconds: 60, maxTurns: 50 });
    const queue = new InProcessQueue(pino({ level: 'silent' }));
    await queue.close(); // a queue that refuses every job
    const { log, lines } = recordingLogger();
    const auto = new AutoCompactor({ shortTerm, queue, tokens: new TokenCounter(), log, limitTokens: 1 });
    const reply = {
      id: 'r1',
      user_id: 'u',
      session_id: 's',
      role: 'assistant' as const,
      name: null,
      content: 'this reply puts the session over its tiny limit',
      content_hash: 'h',
      created_at: new Date().toISOString(),
      importance: null,
      pinned: false,
      metadata: null,
    };
    await shortTerm.push([reply]);
    assert.doesNotThrow(() => auto.onAccepted([reply]));
    await auto.idle();
    assert.equal(auto.counters().failures, 1);
    assert.equal(auto.counters().enqueued, 0);
    const logged = lines.find((l) => l.msg === 'auto-compaction check failed; the reply is unaffected');
    assert.equal(logged?.err, 'queue is closed');
    // the guard was not left set: once the queue works, the next trigger enqueues
    const working = new InProcessQueue(pino({ level: 'silent' }));
    const retry = new AutoCompactor({ shortTerm, queue: working, tokens: new TokenCounter(), log, limitTokens: 1 });
    assert.equal(await retry.check('u', 's'), 'enqueued');
    await working.close();
  });
});
