// A chat message's sessions ordered by their own BM25 too (the `sessions` signal): the pass asks the
// long-term search to score sessions only for a message, and the session holding the message's words
// across its turns comes before the one whose single turn scores best.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/app.js';
import { ALL_SIGNALS } from '../../../src/retrieval/rank.js';
import { memoryOfTurns, recordingRetriever } from '../../helpers/recording-retriever.js';

describe("a message's sessions by their own BM25", () => {
  let memory: Memory;
  let services: Services;
  before(async () => {
    ({ memory, services } = await memoryOfTurns([
      // one turn holding the rarest words of the message, in a session about something else
      ['o1', 'once', 'The ferry timetable for Naxos in the ferry season: the ferry leaves Piraeus early'],
      ['o2', 'once', 'Then I need new running shoes before the marathon'],
      ['o3', 'once', 'And the dentist moved my appointment to Friday'],
      // the trip planned over a whole session, its words spread over the turns
      ['t1', 'trip', 'Lets plan the Naxos trip in June'],
      ['t2', 'trip', 'The hotel near the port has a sea view'],
      ['t3', 'trip', 'Book the ferry on the first morning'],
      ['t4', 'trip', 'The hotel needs a deposit by May'],
      // a short session that names two of the words, each in a turn of its own among other words
      ['m1', 'misc', 'My cousin once worked at a hotel reception desk for a whole summer long'],
      ['m2', 'misc', 'She still talks about the summer she spent on Naxos with her friends'],
    ]));
  });
  after(() => memory.close());

  /** a retriever on the real stores, recording whether each text search was asked to score sessions */
  const recording = (signals = ALL_SIGNALS) => {
    const asked: Array<boolean | undefined> = [];
    return { asked, retriever: recordingRetriever(services, (o) => asked.push(o.bySession), signals) };
  };
  const message = 'Hi again. What about the Naxos hotel and ferry?';

  it('asks for session scores for a message only', async () => {
    const r = recording();
    await r.retriever.retrieve({ query: 'What about the Naxos hotel and ferry?', user_id: 'u', top_k: 5 });
    await r.retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    // the message's second search (feedback) scores sessions too
    assert.deepEqual(r.asked, [undefined, true, true]);
  });

  it('puts the session holding the words across its turns first, where its best turn alone ranks second', async () => {
    const sessions = (r: { results: Array<{ session_id: string }> }) => r.results.slice(0, 3).map((x) => x.session_id);
    // the sessions' own scores alone: without the message's second search (feedback.test.ts)
    const alone = { ...ALL_SIGNALS, feedback: false };
    const off = await recording({ ...alone, sessions: false }).retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    const on = await recording(alone).retriever.retrieve({ query: message, user_id: 'u', top_k: 5 });
    assert.deepEqual(sessions(off), ['once', 'trip', 'misc'], off.results.map((x) => x.id).join(', '));
    // the trip's session scores best, the short misc one next, once's long one last: fused with their
    // places (1, 2, 3), the trip's votes sum highest
    assert.deepEqual(sessions(on), ['trip', 'once', 'misc'], on.results.map((x) => x.id).join(', '));
  });
});
