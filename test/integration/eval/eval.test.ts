// The evaluation's own correctness: metrics on rankings whose answers are known, a hand-made dataset
// run through the real service and the baselines, and the generator's labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeywordBaselines } from '../../../eval/baselines.js';
import { contentStems, generateDataset, type EvalDataset, type EvalTurn } from '../../../eval/dataset.js';
import { scoreRanking, summarize } from '../../../eval/metrics.js';
import { BM25_BASELINE, LIKE_BASELINE, buildResults, canonicalIds, renderMarkdown, type SystemRanking } from '../../../eval/report.js';
import { runService, type ServiceRun } from '../../../eval/service-run.js';
import { parseTimeRange } from '../../../src/retrieval/time-range.js';

describe('metrics', () => {
  it('computes Recall@k, Hit@k and reciprocal rank of a ranked list', () => {
    const s = scoreRanking(['a', 'x', 'b', 'y'], ['a', 'b']);
    assert.deepEqual(s.recall, { 1: 0.5, 5: 1, 8: 1, 10: 1, 20: 1 });
    assert.deepEqual(s.hit, { 1: 1, 5: 1, 8: 1, 10: 1, 20: 1 });
    assert.equal(s.rr, 1);
    const late = scoreRanking(['x', 'y', 'b'], ['b']);
    assert.deepEqual(late.recall, { 1: 0, 5: 1, 8: 1, 10: 1, 20: 1 });
    assert.equal(late.rr, 1 / 3);
    const ninth = scoreRanking([...'abcdefgh'].map((c) => `n${c}`).concat('e'), ['e']);
    assert.equal(ninth.hit[8], 0);
    assert.equal(ninth.hit[20], 1);
    const none = scoreRanking(['x'], ['e']);
    assert.equal(none.rr, 0);
    assert.equal(none.newerFirst, null);
  });

  it('counts a duplicate id once', () => {
    assert.equal(scoreRanking(['a', 'a', 'b'], ['a', 'c']).recall[8], 0.5);
  });

  it('tells whether the newer statement ranks above the superseded one', () => {
    assert.equal(scoreRanking(['new', 'old'], ['new'], ['old']).newerFirst, 1);
    assert.equal(scoreRanking(['old', 'new'], ['new'], ['old']).newerFirst, 0);
    assert.equal(scoreRanking(['new'], ['new'], ['old']).newerFirst, 1);
    assert.equal(scoreRanking(['old'], ['new'], ['old']).newerFirst, 0);
  });

  it('averages over questions', () => {
    const sum = summarize([scoreRanking(['a'], ['a']), scoreRanking(['x', 'a'], ['a']), scoreRanking(['x'], ['a'], ['x'])]);
    assert.equal(sum.n, 3);
    assert.equal(sum.recall[1], 0.333);
    assert.equal(sum.hit[5], 0.667);
    assert.equal(sum.mrr, 0.5);
    assert.equal(sum.newer_first, 0);
    assert.equal(summarize([]).n, 0);
  });
});

/** A set small enough to read, where the right answer of each question is known. */
function handMade(): EvalDataset {
  const t = (id: string, user: string, session: string, at: string, role: 'user' | 'assistant', name: string, content: string): EvalTurn => ({
    id, user_id: user, session_id: session, role, name, content, created_at: at,
  });
  return {
    seed: 0,
    now: '2025-06-20T18:00:00.000Z',
    users: ['ana', 'ben'],
    turns: [
      t('a1', 'ana', 'a-s1', '2024-03-09T10:00:00.000Z', 'user', 'Ana', 'Went sailing on the lake with my cousin, great wind.'),
      t('a2', 'ana', 'a-s1', '2024-03-09T10:01:00.000Z', 'assistant', 'Nova', 'That sounds like a lovely day out!'),
      t('a3', 'ana', 'a-s1', '2024-03-09T10:02:00.000Z', 'user', 'Ana', 'ok thanks'),
      t('a4', 'ana', 'a-s2', '2024-05-11T10:00:00.000Z', 'user', 'Ana', 'Went hiking in the hills, very muddy.'),
      t('a5', 'ana', 'a-s2', '2024-05-11T10:01:00.000Z', 'assistant', 'Nova', 'Which dentist do you go to? I can book the check-up.'),
      t('a6', 'ana', 'a-s2', '2024-05-11T10:02:00.000Z', 'user', 'Ana', 'dr okafor'),
      t('a7', 'ana', 'a-s2', '2024-05-11T10:03:00.000Z', 'user', 'Ana', 'ok thanks'),
      t('a8', 'ana', 'a-s3', '2024-07-01T10:00:00.000Z', 'user', 'Ana', 'Our dog is called Biscuit and she runs the house.'),
      t('b1', 'ben', 'b-s1', '2024-04-01T10:00:00.000Z', 'user', 'Ben', 'I drive a blue Mazda, nothing fancy.'),
      t('b2', 'ben', 'b-s1', '2024-04-01T10:01:00.000Z', 'user', 'Ben', 'Our dog is called Pepper.'),
    ],
    questions: [
      { id: 'q-dog', user_id: 'ana', type: 'single_fact', query: 'What is my dog called?', evidence: ['a8'], stale: [] },
      { id: 'q-dentist', user_id: 'ana', type: 'two_turn', query: 'Which dentist do I go to?', evidence: ['a5', 'a6'], stale: [] },
      { id: 'q-march', user_id: 'ana', type: 'temporal', query: 'What did I do in March 2024?', evidence: ['a1'], stale: [] },
      { id: 'q-vehicle', user_id: 'ben', type: 'paraphrase', query: 'Which vehicle do I own?', evidence: ['b1'], stale: [] },
    ],
  };
}

describe('the evaluation on a hand-made set', () => {
  it('maps duplicate texts of one user to one id, never across users', () => {
    const d = handMade();
    const canon = canonicalIds(d);
    assert.equal(canon('a7'), 'a3');
    assert.equal(canon('a8'), 'a8');
    assert.equal(canon('b2'), 'b2');
  });

  it('ranks with the keyword baselines over all turns of the user', () => {
    const b = new KeywordBaselines(handMade().turns);
    try {
      assert.deepEqual(b.bm25('ana', 'What is my dog called?', 20), ['a8']);
      assert.deepEqual(b.bm25('ana', 'Which dentist do I go to?', 20), ['a5']);
      assert.deepEqual(b.bm25('ben', 'Which vehicle do I own?', 20), []);
      assert.deepEqual(b.like('ana', 'dog called', 20), ['a8']);
      assert.deepEqual(b.like('ana', 'NEAR "*" OR', 20), []);
    } finally {
      b.close();
    }
  });

  it('runs the service and the baselines and reports the figures the answers imply', async () => {
    const d = handMade();
    const run = await runService(d, { label: 'hash', config: { embedding_model: 'hash' } });
    assert.equal(run.available, true);
    const r = run as ServiceRun;
    assert.equal(r.questions.length, 4);
    assert.deepEqual(r.droppedEvidence, []);
    assert.equal(r.turnsStored.turn_log, d.turns.length);

    const b = new KeywordBaselines(d.turns);
    const lists = (f: (user: string, q: string) => string[]) =>
      new Map(d.questions.map((q) => [q.id, { top8: f(q.user_id, q.query).slice(0, 8), top20: f(q.user_id, q.query) }]));
    const baselines: SystemRanking[] = [
      { name: BM25_BASELINE, kind: 'baseline', lists: lists((u, q) => b.bm25(u, q, 20)) },
      { name: LIKE_BASELINE, kind: 'baseline', lists: lists((u, q) => b.like(u, q, 20)) },
    ];
    b.close();
    const results = buildResults(d, [r, { label: 'missing', available: false, reason: 'not installed' }], baselines, 0.3);
    const sys = (name: string) => results.systems.find((s) => s.name === name)!;
    const combined = sys('combined (hash)');
    const bm25 = sys(BM25_BASELINE);

    // the dog: one turn says it; everyone finds it first
    assert.equal(combined.by_type.single_fact.hit[1], 1);
    assert.equal(bm25.by_type.single_fact.hit[1], 1);
    // the dentist: keyword search finds the question only; the combined pass brings the answer too
    assert.equal(bm25.by_type.two_turn.recall[8], 0.5);
    assert.equal(combined.by_type.two_turn.recall[8], 1);
    // March 2024: no word of the question is in the answer; the period finds it
    assert.equal(bm25.by_type.temporal.recall[20], 0);
    assert.equal(combined.by_type.temporal.hit[1], 1);
    // "vehicle" for "Mazda": no keyword method can answer it
    assert.equal(bm25.by_type.paraphrase.recall[20], 0);
    assert.equal(sys(LIKE_BASELINE).by_type.paraphrase.recall[20], 0);
    assert.equal(combined.by_type.updated_fact.n, 0);

    assert.equal(bm25.overall.recall[8], (1 + 0.5 + 0 + 0) / 4);
    assert.ok(combined.overall.recall[8] >= 0.75);
    assert.equal(results.acceptance?.baseline_recall8, bm25.overall.recall[8]);
    assert.deepEqual(results.unavailable, [{ label: 'missing', reason: 'not installed' }]);
    const a = results.attribution[0]!;
    assert.equal(a.evidence_total, 5);
    assert.equal(a.reported_by.long_term + a.reported_by.semantic + a.reported_by.short_term, a.evidence_in_top8);
    const md = renderMarkdown(results);
    assert.match(md, /\| combined \(hash\) \|/);
    assert.match(md, /## Acceptance/);
  });
});

describe('the generated dataset', () => {
  const d = generateDataset({ users: 2 });

  it('is the same for the same seed, and different for another', () => {
    assert.deepEqual(generateDataset({ users: 2 }), d);
    assert.notDeepEqual(generateDataset({ users: 2, seed: 1 }).turns.slice(0, 50), d.turns.slice(0, 50));
  });

  it('holds the size the evaluation promises per user, between named participants', () => {
    for (const user of d.users) {
      const turns = d.turns.filter((t) => t.user_id === user);
      assert.ok(turns.length >= 300, `${user}: ${turns.length} turns`);
      assert.ok(new Set(turns.map((t) => t.session_id)).size >= 10);
      assert.ok(new Set(turns.map((t) => t.name)).size >= 3, 'the user, the assistant and other people');
      assert.ok(turns.every((t) => t.name.length > 0));
    }
  });

  it('labels questions whose evidence exists, with paraphrases sharing no word with it', () => {
    const byId = new Map(d.turns.map((t) => [t.id, t]));
    for (const q of d.questions) {
      assert.ok(q.evidence.length > 0 && q.evidence.every((id) => byId.get(id)?.user_id === q.user_id), q.id);
      if (q.type === 'paraphrase') {
        const words = contentStems(q.evidence.map((id) => byId.get(id)!.content).join(' '));
        for (const w of contentStems(q.query)) assert.ok(!words.has(w), `${q.id}: "${w}" is in the evidence`);
      }
      for (const id of q.stale) assert.ok(byId.get(id)!.created_at < byId.get(q.evidence[0]!)!.created_at, 'stale is older');
    }
  });

  it('phrases each time question so that its period holds the evidence', () => {
    const byId = new Map(d.turns.map((t) => [t.id, t]));
    const temporal = d.questions.filter((q) => q.type === 'temporal');
    assert.ok(temporal.length > 0);
    for (const q of temporal) {
      const period = parseTimeRange(q.query, Date.parse(d.now));
      assert.ok(period, `${q.id}: no period in "${q.query}"`);
      for (const id of q.evidence) {
        const at = byId.get(id)!.created_at;
        assert.ok(at >= period.from && at < period.to, `${q.id}: ${at} outside ${period.from}–${period.to} ("${q.query}")`);
      }
    }
  });
});
