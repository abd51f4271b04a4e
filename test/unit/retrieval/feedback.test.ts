// Relevance feedback for a chat message (the `feedback` signal): the words of the sessions its first
// search found best are searched once more, beside its own, and a session about the same thing in
// other words is found.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/app.js';
import type { MemoryEntry } from '../../../src/domain/entry.js';
import type { TextHit } from '../../../src/ports/long-term.js';
import { FEEDBACK_SESSIONS, FEEDBACK_SHARE, FEEDBACK_WORDS, feedbackWords, withAddedWords } from '../../../src/retrieval/feedback.js';
import { bm25Idf, isContentWord, words as wordsOf } from '../../../src/retrieval/query-terms.js';
import { ALL_SIGNALS } from '../../../src/retrieval/rank.js';
import { settle } from '../../../src/retrieval/word-ids.js';
import { memoryOfTurns, recordingRetriever } from '../../helpers/recording-retriever.js';

const hit = (session_id: string, content: string, session_bm25?: number): TextHit => ({
  entry: { id: `${session_id}-${content.length}`, user_id: 'u', session_id, content } as MemoryEntry,
  bm25: 1,
  ...(session_bm25 !== undefined ? { session_bm25 } : {}),
});
const weightOf = (words: ReadonlyArray<{ word: string; weight: number }>, word: string) => words.find((w) => w.word === word)?.weight ?? 0;

describe('feedbackWords', () => {
  it('gives nothing without session scores (a question is not searched again)', () => {
    assert.deepEqual(feedbackWords([hit('a', 'the ferry to Naxos'), hit('b', 'a hotel in June')], 3), []);
    assert.deepEqual(feedbackWords([hit('a', 'the ferry to Naxos', 2)], 0), []);
  });

  it("weighs the best sessions' words by their share, their session's score and their rarity among the hits", () => {
    const hits = [
      hit('trip', 'ferry ferry hotel plan', 4),
      hit('trip', 'hotel deposit plan', 4),
      hit('other', 'plan dentist', 2),
      hit('third', 'plan gym', 1),
      hit('fourth', 'plan cheese', 0.5),
    ];
    const words = feedbackWords(hits, 4);
    const total = words.reduce((s, w) => s + w.weight, 0);
    assert.ok(Math.abs(total - (4 * FEEDBACK_SHARE) / (1 - FEEDBACK_SHARE)) < 1e-9, `the added words weigh ${FEEDBACK_SHARE} of the query: ${total}`);
    assert.ok(weightOf(words, 'ferry') > weightOf(words, 'hotel') || weightOf(words, 'ferry') === weightOf(words, 'hotel'), 'twice in one turn');
    assert.ok(weightOf(words, 'ferry') > weightOf(words, 'dentist'), "the best session's word above the second's");
    assert.ok(weightOf(words, 'dentist') > weightOf(words, 'gym'), 'the second above the third');
    assert.ok(weightOf(words, 'hotel') > weightOf(words, 'plan'), 'a word every hit holds tells none apart');
    assert.equal(weightOf(words, 'cheese'), 0, `only the ${FEEDBACK_SESSIONS} best sessions`);
  });

  it(`adds at most ${FEEDBACK_WORDS} words, the heaviest`, () => {
    const many = Array.from({ length: 3 * FEEDBACK_WORDS }, (_, i) => `word${i}`);
    const words = feedbackWords([hit('a', `${many.slice(0, 10).join(' ')} ${many.slice(0, 10).join(' ')} ${many.join(' ')}`, 3)], 5);
    assert.equal(words.length, FEEDBACK_WORDS);
    for (const w of many.slice(0, 10)) assert.ok(weightOf(words, w) > 0, `${w}, held three times, is kept`);
  });

  it('keeps the words every weight of the formula would keep', () => {
    // the formula over every word of the best sessions, each idf counted: what the words must be
    const exhaustive = (hits: readonly TextHit[], queryWords: number) => {
      const counts = (h: TextHit) => {
        const m = new Map<string, number>();
        for (const w of wordsOf(h.entry.content)) if (isContentWord(w)) m.set(w, (m.get(w) ?? 0) + 1);
        return m;
      };
      const bySession = new Map<string, { score: number; hits: TextHit[] }>();
      for (const h of hits) if ((h.session_bm25 ?? 0) > 0) bySession.set(h.entry.session_id, { score: h.session_bm25!, hits: [...(bySession.get(h.entry.session_id)?.hits ?? []), h] });
      const best = [...bySession.values()].sort((a, b) => b.score - a.score).slice(0, FEEDBACK_SESSIONS);
      const shares = new Map<string, number>();
      for (const s of best) {
        const total = s.hits.reduce((t, h) => t + [...counts(h).values()].reduce((a, b) => a + b, 0), 0);
        for (const h of s.hits) for (const [w, n] of counts(h)) shares.set(w, (shares.get(w) ?? 0) + (s.score / best[0]!.score / total) * n);
      }
      const weighed = [...shares].map(([w, share]): [string, number] => [w, share * bm25Idf(hits.length, hits.filter((h) => counts(h).has(w)).length)]);
      const top = weighed.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FEEDBACK_WORDS);
      const sum = top.reduce((t, [, v]) => t + v, 0);
      return top.map(([word, v]) => ({ word, weight: (v * (queryWords * FEEDBACK_SHARE)) / (1 - FEEDBACK_SHARE) / sum }));
    };
    let seed = 7;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const vocabulary = Array.from({ length: 90 }, (_, i) => `topic${i}`);
    for (let round = 0; round < 40; round++) {
      // six sessions, each of its own score; common words more often than rare ones
      const hits = Array.from({ length: 6 + Math.floor(rnd() * 20) }, (_, i) => {
        const text = Array.from({ length: 3 + Math.floor(rnd() * 60) }, () => vocabulary[Math.floor(rnd() ** 2 * vocabulary.length)]).join(' ');
        const session = Math.floor(rnd() * 6);
        const h = hit(`s${session}`, text, 1 + session * 0.7);
        return { ...h, entry: { ...h.entry, id: `h${i}` } };
      });
      const got = feedbackWords(hits, 5);
      const want = exhaustive(hits, 5);
      assert.deepEqual(got.map((w) => w.word), want.map((w) => w.word), `round ${round}`);
      got.forEach((w, i) => assert.ok(Math.abs(w.weight - want[i]!.weight) < 1e-9, `round ${round}: ${w.word}`));
    }
  });

  it('reads no word counts taken under an earlier table of word ids', () => {
    const trip = [hit('trip', 'ferry ferry hotel plan', 4), hit('trip', 'hotel deposit plan', 4), hit('other', 'plan dentist', 2)];
    const first = feedbackWords(trip, 4);
    // the table starts afresh, and other words take the ids the trip's words had
    settle(0);
    feedbackWords([hit('zoo', 'zebra giraffe lion tiger otter penguin', 3)], 2);
    assert.deepEqual(feedbackWords(trip, 4), first);
  });
});

describe('withAddedWords', () => {
  const scored = (id: string, session_id: string, bm25: number, session_bm25?: number): TextHit => ({ ...hit(session_id, id), entry: { ...hit(session_id, id).entry, id }, bm25, ...(session_bm25 !== undefined ? { session_bm25 } : {}) });
  it("sums a hit's and a session's scores over both searches, keeps the best `limit`", () => {
    const found = [scored('a', 's1', 3, 10), scored('b', 's2', 2, 5), scored('c', 's3', 1, 1)];
    const added = [scored('c', 's3', 4, 6), scored('d', 's1', 1.5, 7), scored('e', 's4', 0.5, 2)];
    const out = withAddedWords(found, added, 4);
    assert.deepEqual(out.map((h) => [h.entry.id, h.bm25, h.session_bm25]), [
      ['c', 5, 7],
      ['a', 3, 17],
      ['b', 2, 5],
      ['d', 1.5, 17],
    ]);
    assert.equal(found[2]!.bm25, 1, "the first search's hits are not changed");
  });
});

describe("a message's second search, with its best sessions' words", () => {
  let memory: Memory;
  let services: Services;
  before(async () => {
    ({ memory, services } = await memoryOfTurns([
      ['t1', 'trip', 'Lets plan the Naxos trip for June with the kids'],
      ['t2', 'trip', 'The Naxos trip needs a ferry and a hotel near the beach'],
      ['t3', 'trip', 'For the Naxos trip, the ferry in the morning and the hotel with a pool for the kids'],
      // the same trip later, in other words: none of the message's
      ['f1', 'follow', 'The June ferry is booked, the hotel near the beach too, the kids are excited'],
      // sessions sharing one word of the message each
      ...[
        'My colleague went on a long work trip to Lisbon in the spring, with meetings every single day and dinners with clients',
        'Naxos cheese is back in the shop on the corner, next to the bakery that sells sourdough bread and olive oil',
        'A road trip with the band last year was great fun, we played seven concerts in small towns along the coast',
        'The printer jammed again this morning at the office, so the quarterly report went out late to every manager',
        'A long trip to the dentist across town this afternoon, the traffic was terrible and the waiting room was packed',
      ].map((c, i) => [`d${i}`, `d${i}`, c] as const),
    ]));
  });
  after(() => memory.close());

  /** a retriever on the real stores, recording whether each text search scored sessions and how many words it added */
  const recording = (signals = ALL_SIGNALS) => {
    const asked: Array<{ bySession?: boolean; expansion: number }> = [];
    return { asked, retriever: recordingRetriever(services, (o) => asked.push({ ...(o.bySession !== undefined ? { bySession: o.bySession } : {}), expansion: o.expansion?.length ?? 0 }), signals) };
  };
  const message = 'Hi again. What did we decide for the Naxos trip?';

  it('searches a message twice, the second time with added words; a question once', async () => {
    const r = recording();
    await r.retriever.retrieve({ query: 'What did we decide for the Naxos trip?', user_id: 'u', top_k: 3 });
    assert.deepEqual(r.asked, [{ expansion: 0 }]);
    r.asked.length = 0;
    await r.retriever.retrieve({ query: message, user_id: 'u', top_k: 3 });
    assert.equal(r.asked.length, 2);
    assert.deepEqual(r.asked[0], { bySession: true, expansion: 0 });
    assert.ok(r.asked[1]!.bySession === true && r.asked[1]!.expansion > 0 && r.asked[1]!.expansion <= FEEDBACK_WORDS, JSON.stringify(r.asked));
  });

  it('finds the session about the same thing in other words', async () => {
    const sessions = (r: { results: Array<{ session_id: string }> }) => r.results.map((x) => x.session_id);
    const off = await recording({ ...ALL_SIGNALS, feedback: false }).retriever.retrieve({ query: message, user_id: 'u', top_k: 4 });
    const on = await recording().retriever.retrieve({ query: message, user_id: 'u', top_k: 4 });
    assert.ok(!sessions(off).includes('follow'), sessions(off).join(', '));
    assert.ok(sessions(on).includes('follow'), sessions(on).join(', '));
    assert.equal(sessions(on)[0], 'trip');
  });
});
