// A chat message's sessions ordered by their own BM25 too (the `sessions` signal): the pass asks the
// long-term search to score sessions only for a message, and the session holding the message's words
// across its turns comes before the one whose single turn scores best.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/app.js';
import type { ListOptions } from '../../../src/ports/long-term.js';
import { Retriever } from '../../../src/retrieval/retrieve.js';
import { ALL_SIGNALS } from '../../../src/retrieval/rank.js';
import { testMemory } from '../../helpers/services.js';

describe("a message's sessions by their own BM25", () => {
  let memory: Memory;
  let services: Services;
  before(async () => {
    ({ memory, services } = await testMemory({}, { reconcile: false }));
    const turn = (id: string, session_id: string, content: string) => ({ id, user_id: 'u', session_id, role: 'user' as const, content, importance: 0.9 });
    await memory.addTurns([
      // one turn holding the rarest words of the message, in a session about something else
      turn('o1', 'once', 'The ferry timetable for Naxos in the ferry season: the ferry leaves Piraeus early'),
      turn('o2', 'once', 'Then I need new running shoes before the marathon'),
      turn('o3', 'once', 'And the dentist moved my appointment to Friday'),
      // the trip planned over a whole session, its words spread over the turns
      turn('t1', 'trip', 'Lets plan the Naxos trip in June'),
      turn('t2', 'trip', 'The hotel near the port has a sea view'),
      turn('t3', 'trip', 'Book the ferry on the first morning'),
      turn('t4', 'trip', 'The hotel needs a deposit by May'),
      // a short session that names two of the words, each in a turn of its own among other words
      turn('m1', 'misc', 'My cousin once worked at a hotel reception desk for a whole summer long'),
      turn('m2', 'misc', 'She still talks about the summer she spent on Naxos with her friends'),
    ]);
    await memory.idle();
  });
  after(() => memory.close());

  /** a retriever on the real stores, recording whether each text search was asked to score sessions */
  const recording = (signals = ALL_SIGNALS) => {
    const asked: Array<boolean | undefined> = [];
    const base = services.retrieverDeps;
    const longTerm = Object.assign(Object.create(base.longTerm) as typeof base.longTerm, {
      searchText(userId: string, query: string, o: ListOptions) {
        asked.push(o.bySession);
        return base.longTerm.searchText(userId, query, o);
      },
    });
    return { asked, retriever: new Retriever({ ...base, longTerm, signals }) };
  };
  const message = 'Hi again. What about the Naxos hotel and ferry?';

  it('asks for session scores for a message only', async () => {
    const r = recording();
    await r.retriever.retrieve({ query: 'What about the Naxos hotel and ferry?', user_id: 'u', top_k: 5 });
    await r.retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    assert.deepEqual(r.asked, [undefined, true]);
  });

  it('puts the session holding the words across its turns first, where its best turn alone ranks second', async () => {
    const sessions = (r: { results: Array<{ session_id: string }> }) => r.results.slice(0, 3).map((x) => x.session_id);
    const off = await recording({ ...ALL_SIGNALS, sessions: false }).retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    const on = await recording().retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    assert.deepEqual(sessions(off), ['once', 'trip', 'misc'], off.results.map((x) => x.id).join(', '));
    // the trip's session scores best, the short misc one next, once's long one last: fused with their
    // places (1, 2, 3), the trip's votes sum highest
    assert.deepEqual(sessions(on), ['trip', 'once', 'misc'], on.results.map((x) => x.id).join(', '));
  });
});
