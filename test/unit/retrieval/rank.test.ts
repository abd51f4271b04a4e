import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExplainSchema, type RetrievalResult } from '../../../src/domain/entry.js';
import { parseTimeRange } from '../../../src/retrieval/time-range.js';
import { ALL_SIGNALS, CONTEXT_SHARE, NEIGHBOUR_SHARE, OTHER_SPEAKER_SHARE, QUESTION_SHARE, RECENCY_HALF_LIFE_DAYS, RRF_K, WEIGHTS, MESSAGE_SENTENCES, MESSAGE_WORDS, addContext, asksOnly, asksWork, finalize, fuse, isShort, scoreCandidates, type Candidate } from '../../../src/retrieval/rank.js';
import { passageWork, vectorPassage } from '../../../src/retrieval/passage.js';
import { textCacheSize } from '../../../src/retrieval/text-cache.js';
import { mentionedWork } from '../../../src/retrieval/time-range.js';

const NOW = Date.parse('2025-06-20T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW - d * 86_400_000).toISOString();

let n = 0;
function cand(content: string, o: Partial<Candidate> = {}): Candidate {
  n++;
  return {
    id: o.id ?? `m${n}`,
    user_id: 'u',
    session_id: 's',
    role: 'user',
    name: 'Maya',
    kind: 'turn',
    content,
    content_hash: o.content_hash ?? `h:${content}`,
    created_at: daysAgo(10),
    importance: 0.5,
    ...o,
  };
}

/** the score recomputed from the parts `explain` reports */
function fromParts(r: RetrievalResult): number {
  const e = r.explain;
  return WEIGHTS.relevance * e.relevance + WEIGHTS.period * (e.in_period ? 1 : 0) + WEIGHTS.tier_priority * e.tier_priority + WEIGHTS.recency * e.recency + WEIGHTS.importance * e.importance;
}

describe('fusion', () => {
  it('ranks a memory two lists agree on above one a single list ranks first', () => {
    const a = cand('a'), b = cand('b'), c = cand('c');
    const results = fuse({ long_term: [a, b], semantic: [c, b] }, { topK: 8, now: NOW });
    assert.equal(results[0]!.id, b.id);
    assert.deepEqual(results[0]!.explain.ranks, { long_term: 2, semantic: 2 });
  });

  it('uses ranks only: scaling the raw scores of a list changes nothing', () => {
    const mk = (scale: number) => [cand('x', { id: 'x', similarity: 0.9 * scale }), cand('y', { id: 'y', similarity: 0.2 * scale })];
    const small = fuse({ semantic: mk(1), long_term: [cand('z', { id: 'z', bm25: 12 })] }, { topK: 8, now: NOW });
    const large = fuse({ semantic: mk(1000), long_term: [cand('z', { id: 'z', bm25: 0.001 })] }, { topK: 8, now: NOW });
    assert.deepEqual(small.map((r) => [r.id, r.score]), large.map((r) => [r.id, r.score]));
  });

  it('scales fusion to [0, 1]: first in every list that returned anything is 1', () => {
    const top = cand('top');
    const [r] = fuse({ long_term: [top, cand('q')], semantic: [{ ...top }], short_term: [] }, { topK: 1, now: NOW });
    assert.equal(r!.explain.fusion, 1);
    const [only] = fuse({ long_term: [cand('p')], semantic: [cand('r')] }, { topK: 1, now: NOW });
    assert.ok(Math.abs(only!.explain.fusion - 0.5) < 1e-6);
    assert.ok(Math.abs(1 / (RRF_K + 1) / (2 / (RRF_K + 1)) - only!.explain.fusion) < 1e-6);
  });

  it('deduplicates by content hash, reporting the highest-priority tier and every rank', () => {
    const lt = cand('same text', { id: 'lt', content_hash: 'H', bm25: 3.2, importance: 0.8 });
    const sem = cand('same text', { id: 'sem', content_hash: 'H', similarity: 0.7, importance: null });
    const st = cand('same text', { id: 'st', content_hash: 'H', importance: null });
    const results = fuse({ semantic: [sem], long_term: [lt], short_term: [st] }, { topK: 8, now: NOW });
    assert.equal(results.length, 1);
    const [r] = results;
    assert.equal(r!.tier, 'short_term');
    assert.equal(r!.id, 'st');
    assert.deepEqual(r!.explain.ranks, { short_term: 1, long_term: 1, semantic: 1 });
    assert.equal(r!.explain.similarity, 0.7);
    assert.equal(r!.explain.bm25, 3.2);
    assert.equal(r!.explain.importance, 0.8); // the known importance wins over unknown
    assert.equal(r!.explain.tier_priority, 1);
  });

  it('reports every part of the score, and the score is their weighted sum', () => {
    const results = fuse(
      { long_term: [cand('one fact', { created_at: daysAgo(RECENCY_HALF_LIFE_DAYS), importance: 0.9 }), cand('two')], semantic: [cand('three')] },
      { topK: 8, now: NOW, period: parseTimeRange('in January', NOW) },
    );
    for (const r of results) {
      ExplainSchema.parse(r.explain);
      assert.ok(Math.abs(r.score - fromParts(r)) < 1e-5, `${r.score} vs ${fromParts(r)}`);
      assert.ok(r.explain.fusion >= 0 && r.explain.fusion <= 1);
    }
    const one = results.find((r) => r.content === 'one fact')!;
    assert.ok(Math.abs(one.explain.recency - 0.5) < 1e-6, 'recency halves every half-life');
    assert.equal(one.explain.importance, 0.9);
    assert.equal(one.explain.in_period, false);
  });

  it('cuts to top_k, best first', () => {
    const list = Array.from({ length: 20 }, (_, i) => cand(`item ${i}`));
    const results = fuse({ long_term: list }, { topK: 5, now: NOW });
    assert.equal(results.length, 5);
    assert.deepEqual(results.map((r) => r.content), ['item 0', 'item 1', 'item 2', 'item 3', 'item 4']);
    for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.score >= results[i]!.score);
  });
});

describe('a message about a topic: held words by their rarity', () => {
  const terms = ['thought', 'plan', 'week', 'sourdough', 'starter', 'regarding', 'discussed', 'last', 'time', 'more', 'again', 'feeding'];
  // four candidates hold two common words of the message, one holds its one rare word
  const common = [1, 2, 3, 4].map((i) => cand(`The plan for week ${i} is set`, { id: `common${i}`, session_id: `s${i}` }));
  const rare = cand('Your sourdough is coming along', { id: 'rare', session_id: 's5' });
  const lists = () => ({ long_term: [...common, rare].map((c) => ({ ...c })) });
  const overlapRank = (results: RetrievalResult[]) => results.find((r) => r.id === 'rare')!.explain.overlap_rank;

  it('counts a word held by few of the candidates above words most of them hold', () => {
    assert.equal(overlapRank(fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS })), 1);
  });

  it("counts each of a question's words one", () => {
    assert.equal(overlapRank(fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS - 1 })), 5);
  });
});

describe("a message about a topic: results spread over sessions", () => {
  const terms = ['garden', 'tomatoes', 'watering', 'schedule', 'balcony', 'pots', 'soil', 'mix', 'regarding', 'discussed', 'thought', 'again'];
  const a1 = cand('Your balcony garden: tomatoes in large pots with a loose soil mix', { id: 'a1', session_id: 'a' });
  const a2 = cand('A watering schedule for the tomatoes in pots on the balcony', { id: 'a2', session_id: 'a' });
  const a3 = cand('Soil mix for balcony pots: compost and perlite', { id: 'a3', session_id: 'a' });
  const b1 = cand('Tomatoes need a steady watering schedule', { id: 'b1', session_id: 'b' });
  const lists = () => ({ long_term: [a1, a2, a3, b1].map((c) => ({ ...c })) });
  const ids = (results: RetrievalResult[]) => results.map((r) => r.id);

  it("puts each session's best memory first, then the rest in score order", () => {
    const spread = fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS });
    const plain = fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS, signals: { ...ALL_SIGNALS, spread: false } });
    assert.ok(ids(plain).indexOf('b1') > 1, ids(plain).join(', '));
    assert.deepEqual(ids(spread), [ids(plain)[0]!, 'b1', ...ids(plain).filter((id) => id !== 'b1').slice(1)]);
  });

  it("leaves a question's results in score order", () => {
    const question = fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS - 1 });
    assert.ok(ids(question).indexOf('b1') > 1, ids(question).join(', '));
  });

  it("orders the sessions by their best memory's place fused with the session's own BM25 (sessions)", () => {
    const c1 = cand('Garden pots', { id: 'c1', session_id: 'c' });
    // the session scores as the text search gives them: b the best conversation, then c, then a
    const scores: Record<string, number> = { a: 1, b: 9, c: 4 };
    const three = () => ({ long_term: [a1, a2, a3, b1, c1].map((c) => ({ ...c, session_bm25: scores[c.session_id!] })) });
    const plain = fuse(three(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS, signals: { ...ALL_SIGNALS, sessions: false } });
    assert.deepEqual(ids(plain).slice(0, 3).map((id) => id[0]), ['a', 'b', 'c'], ids(plain).join(', '));
    // a: places 1 and 3, b: 2 and 1, c: 3 and 2 — b's votes sum highest, then a's
    const fused = fuse(three(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS });
    assert.deepEqual(ids(fused).slice(0, 3).map((id) => id[0]), ['b', 'a', 'c'], ids(fused).join(', '));
    assert.deepEqual(ids(fused).slice(3), ids(plain).slice(3), "the sessions' further memories after them, in score order");
  });

  it('spreads a short message of two sentences or more as well (MESSAGE_SENTENCES)', () => {
    const short = fuse(lists(), { topK: 8, now: NOW, terms, queryWords: MESSAGE_WORDS - 1, querySentences: MESSAGE_SENTENCES });
    assert.equal(ids(short).indexOf('b1'), 1, ids(short).join(', '));
  });
});

describe('the period a time question names', () => {
  it('marks memories in the period and ranks them above equally relevant ones outside it', () => {
    const period = parseTimeRange('what did I do in March', NOW)!;
    const outside = cand('went kayaking', { created_at: '2025-05-10T10:00:00.000Z' });
    const inside = cand('went sailing', { created_at: '2025-03-10T10:00:00.000Z' });
    const results = fuse({ long_term: [outside, inside], period: [inside] }, { topK: 8, now: NOW, period });
    assert.equal(results[0]!.content, 'went sailing');
    assert.equal(results[0]!.explain.in_period, true);
    assert.equal(results[0]!.explain.period_rank, 1);
    assert.equal(results[1]!.explain.in_period, false);
    assert.equal(results[1]!.explain.period_rank, null);
  });

  it('counts as in the period a turn said later that dates its event into it', () => {
    const period = parseTimeRange('what did I do in March', NOW)!;
    const later = cand('Two weeks ago we went sailing with my cousin', { id: 'later', created_at: '2025-04-01T10:00:00.000Z' });
    const unrelated = cand('we went sailing on the lake', { id: 'other', created_at: '2025-05-10T10:00:00.000Z' });
    const results = fuse({ long_term: [unrelated, later] }, { topK: 8, now: NOW, period });
    assert.equal(results[0]!.id, 'later');
    assert.equal(results[0]!.explain.in_period, true);
    assert.equal(results[1]!.explain.in_period, false);
  });

  it('leaves in_period null when the query names no period', () => {
    const [r] = fuse({ long_term: [cand('x')] }, { topK: 8, now: NOW });
    assert.equal(r!.explain.in_period, null);
    assert.equal(r!.explain.period_rank, null);
  });

  it('reports a memory only the period list found as long-term', () => {
    const period = parseTimeRange('in March', NOW)!;
    const [r] = fuse({ period: [cand('only here', { created_at: '2025-03-02T00:00:00.000Z' })] }, { topK: 8, now: NOW, period });
    assert.equal(r!.tier, 'long_term');
    assert.deepEqual(r!.explain.ranks, {});
  });
});

describe('supersession: the newer of two conflicting statements wins', () => {
  const old = () => cand('I live in Denver, near the river.', { id: 'old', created_at: daysAgo(300), importance: 0.9 });
  const newer = () => cand('We moved to Austin, I live near the coast now.', { id: 'new', created_at: daysAgo(20), importance: 0.6 });
  const terms = ['live'];

  it('ranks the older statement just below the newer one that announces a change', () => {
    const results = fuse({ long_term: [old(), newer()], semantic: [old(), newer()] }, { topK: 8, now: NOW, terms });
    assert.deepEqual(results.map((r) => r.id), ['new', 'old']);
    assert.equal(results[1]!.explain.superseded_by, 'new');
    assert.equal(results[0]!.explain.superseded_by, null);
  });

  it('does not apply between different speakers, to questions, or without a change word', () => {
    const other = { ...newer(), name: 'Priya' };
    assert.equal(fuse({ long_term: [old(), other] }, { topK: 8, now: NOW, terms })[0]!.id, 'old');
    const question = cand('Do you think I should live in Austin now?', { id: 'q', created_at: daysAgo(5) });
    assert.equal(fuse({ long_term: [old(), question] }, { topK: 8, now: NOW, terms })[0]!.id, 'old');
    const noChange = cand('I live for the weekends honestly.', { id: 'nc', created_at: daysAgo(5) });
    assert.equal(fuse({ long_term: [old(), noChange] }, { topK: 8, now: NOW, terms })[0]!.id, 'old');
  });

  it('does not let a far weaker newer mention drag a strong older answer down', () => {
    const filler = Array.from({ length: 12 }, (_, i) => cand(`filler ${i}`));
    const results = fuse({ long_term: [old(), ...filler, newer()], semantic: [old()] }, { topK: 20, now: NOW, terms });
    assert.equal(results[0]!.id, 'old');
    assert.equal(results[0]!.explain.superseded_by, null);
  });

  it('does not apply when the query names a period (it asks about then, not now)', () => {
    const period = parseTimeRange('where did I live in 2024', NOW);
    const results = fuse({ long_term: [old(), newer()], semantic: [old(), newer()] }, { topK: 8, now: NOW, terms, period });
    assert.ok(results.every((r) => r.explain.superseded_by === null));
  });
});

describe('neighbouring turns as context', () => {
  it('adds the answer after a question with a share of its relevance, under the hit\'s tier', () => {
    const question = cand('Which dentist do you go to?', { id: 'q', role: 'assistant', name: 'Nova' });
    const options = { topK: 8, now: NOW };
    const scored = scoreCandidates({ long_term: [question, cand('unrelated')] }, options);
    const answer = cand('dr okafor', { id: 'a' });
    const hit = scored.find((s) => s.candidate.id === 'q')!;
    const withContext = addContext(scored, [{ parent: hit, turn: answer, share: CONTEXT_SHARE }], options);
    const results = finalize(withContext, options);
    const a = results.find((r) => r.id === 'a')!;
    assert.equal(a.explain.context_of, 'q');
    assert.equal(a.tier, 'long_term');
    assert.deepEqual(a.explain.ranks, {});
    // the question's whole relevance is passed on, though its own score keeps QUESTION_SHARE of it
    assert.ok(Math.abs(a.explain.relevance - CONTEXT_SHARE * hit.relevance) < 1e-5);
    assert.ok(Math.abs(results.find((r) => r.id === 'q')!.explain.relevance - QUESTION_SHARE * hit.relevance) < 1e-5);
    assert.ok(Math.abs(a.score - fromParts(a)) < 1e-5);
  });

  it('ranks the rest of what the best hit tells above what a single list ranks first', () => {
    const options = { topK: 8, now: NOW };
    const hit = cand('We went camping at the lake with the kids and roasted marshmallows by the fire', { id: 'hit' });
    const single = cand('The campsite by the river had a lovely view of the hills every single morning', { id: 'single' });
    const scored = scoreCandidates({ long_term: [hit, cand('filler words here')], semantic: [single, hit] }, options);
    const best = scored.find((s) => s.candidate.id === 'hit')!;
    const rest = cand('At night we watched the meteor shower and counted shooting stars until midnight', { id: 'rest' });
    const ids = finalize(addContext(scored, [{ parent: best, turn: rest, share: NEIGHBOUR_SHARE }], options), options).map((r) => r.id);
    assert.ok(ids.indexOf('rest') < ids.indexOf('single'), ids.join(', '));
  });

  it('adds a long neighbour only when it matched the query itself: one that shares nothing with it is about something else', () => {
    const options = { topK: 8, now: NOW, terms: ['budget'] };
    const question = cand('Can you help me with my budget?', { id: 'q' });
    const matched = cand('Here is your budget: rent first, then groceries, transport, phone, internet, insurance, gym membership, streaming services, gifts, clothing, haircuts, pet food, vet visits, car repairs, parking, fuel, coffee, lunches, dinners out, holidays, concerts, books, hobbies, charity, an emergency fund, a pension, and a little savings pot for whatever comes up.', { id: 'matched', role: 'assistant', name: null });
    const scored = scoreCandidates({ long_term: [question, matched] }, options);
    const hit = scored.find((s) => s.candidate.id === 'q')!;
    const unmatched = cand('Sure. Tomorrow morning we start early: stretching, breakfast with oats and berries, a brisk walk around the park, then emails, calls, the quarterly report, lunch with colleagues, a design review, code reviews, planning poker, tea, a short nap, groceries, cooking dinner, reading novels, journaling, meditation, and sleeping before eleven.', { id: 'unmatched', role: 'assistant', name: null });
    assert.ok(!isShort(unmatched.content) && !isShort(matched.content));
    const ids = addContext(scored, [{ parent: hit, turn: unmatched, share: CONTEXT_SHARE }, { parent: hit, turn: { ...matched }, share: CONTEXT_SHARE }], options).map((s) => s.candidate.id);
    assert.ok(!ids.includes('unmatched'), ids.join(', '));
    assert.ok(ids.includes('matched'));
    // a short answer ("dr okafor") shares no word with its question and is still added (the first case)
  });

  it('keeps a neighbour\'s own relevance when it is higher, and never duplicates it', () => {
    const options = { topK: 8, now: NOW };
    const hit = cand('weak hit', { id: 'weak' });
    const strong = cand('strong', { id: 'strong' });
    const scored = scoreCandidates({ long_term: [strong, cand('x'), cand('y'), hit] }, options);
    const weak = scored.find((s) => s.candidate.id === 'weak')!;
    const out = addContext(scored, [{ parent: weak, turn: { ...strong }, share: CONTEXT_SHARE }], options);
    assert.equal(out.length, scored.length);
    const s = out.find((x) => x.candidate.id === 'strong')!;
    assert.equal(s.contextOf, null);
    assert.equal(s.relevance, s.fusion);
  });
});

describe('who said it, and turns that only ask', () => {
  it('ranks what the named participant said above what someone else said, when the query names them', () => {
    const other = cand('the lake painting is lovely', { id: 'caroline', name: 'Caroline' });
    const own = cand('I painted a sunrise', { id: 'melanie', name: 'Melanie' });
    const lists = { long_term: [other, own], semantic: [other, own] };
    assert.deepEqual(fuse(lists, { topK: 8, now: NOW, speakers: ['melanie'] }).map((r) => r.id), ['melanie', 'caroline']);
    const [, demoted] = fuse(lists, { topK: 8, now: NOW, speakers: ['melanie'] });
    assert.ok(Math.abs(demoted!.explain.relevance - OTHER_SPEAKER_SHARE * demoted!.explain.fusion) < 1e-5);
    assert.ok(Math.abs(demoted!.score - fromParts(demoted!)) < 1e-5);
    // a query naming nobody ranks by relevance alone
    assert.deepEqual(fuse(lists, { topK: 8, now: NOW }).map((r) => r.id), ['caroline', 'melanie']);
  });

  it('tells a turn that only asks from one that says something and asks too', () => {
    assert.equal(asksOnly('Wow, nice! What breed is it?'), true);
    assert.equal(asksOnly('Which dentist do you go to?'), true);
    assert.equal(asksOnly('We adopted a beagle puppy last week. What do you think of the name Rex?'), false);
    assert.equal(asksOnly('I love pottery.'), false);
  });

  it('ranks a statement above a question that matched as well', () => {
    const question = cand('Do you have any pets?', { id: 'q', name: 'Melanie' });
    const statement = cand('We have two cats and a dog.', { id: 's', name: 'Melanie' });
    const results = fuse({ long_term: [question, statement], semantic: [question, statement] }, { topK: 8, now: NOW });
    assert.deepEqual(results.map((r) => r.id), ['s', 'q']);
  });
});

describe('long memories asked about pass after pass', () => {
  const paragraph = (i: number) => `Paragraph ${i} walks through the quarterly figures once more, past the usual points. Why? `;
  const long = (tail: string) => `${Array.from({ length: 400 }, (_, i) => paragraph(i)).join('')}${tail}`;

  it('reads none of their texts again in a second pass, read afresh from the store', () => {
    const texts = [long('Yesterday the ferry to Inishmore left from pier four.'), long('The Lisbon budget was 900 euros last week.'), long('What ferry did we take?')];
    assert.ok(texts.every((t) => t.length > 30_000));
    const now = Date.parse('2025-06-20T12:00:00.000Z');
    const period = parseTimeRange('what happened last week', now);
    // each pass reads its rows anew: equal texts, other strings
    const pass = () => {
      const cands = texts.map((t, i) => cand([...t].join(''), { id: `long${i}`, content_hash: `long${i}`, created_at: '2025-06-19T09:00:00.000Z' }));
      const o = { topK: 8, now, period, terms: ['ferry', 'inishmore', 'pier', 'figures'] };
      return fuse({ long_term: cands, semantic: [...cands].reverse() }, o);
    };
    const work = () => passageWork.chars + mentionedWork.chars + asksWork.chars;
    const start = work();
    const first = pass();
    const read = work() - start;
    assert.ok(read >= texts.reduce((s, t) => s + t.length, 0), `the first pass reads each text (read ${read})`);
    assert.ok(first.every((r) => r.passage), 'each long result has its passage');
    assert.ok(first.some((r) => r.explain.in_period), 'the turn dating its event into the period is in it');
    const again = work();
    assert.deepEqual(pass(), first);
    assert.equal(work() - again, 0);
  });

  it('keeps the turn once, not also the turn without its questions', () => {
    const text = long(`and one more ${Math.random()} statement at the end.`);
    const before = textCacheSize().texts;
    assert.equal(asksOnly(text), false);
    // what the rest of the pass asks of the turn is kept with it
    assert.equal(isShort(text), false);
    assert.equal(textCacheSize().texts - before, 1);
  });
});

describe('a long result matched by a passage vector', () => {
  const content = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} walks through the quarterly figures once more.`).join(' ');

  it('is reported with that passage when none of the query words is in it, and with the words\' own window when they are', () => {
    const text = cand(content, { id: 'long', content_hash: 'long' });
    const semantic = { ...text, similarity: 0.4, part: 9 };
    const [r] = fuse({ long_term: [text], semantic: [semantic] }, { topK: 3, now: NOW, terms: ['zanzibar'] });
    assert.deepEqual(r!.passage, vectorPassage(content, 9));
    assert.ok(!('part' in r!), 'the part stays out of the result');
    const [w] = fuse({ long_term: [text], semantic: [semantic] }, { topK: 3, now: NOW, terms: ['paragraph', '250'] });
    assert.ok(w!.passage?.text.includes('Paragraph 250'), w!.passage?.text);
  });
});
