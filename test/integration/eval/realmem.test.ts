// The RealMem evaluation's reader and runner on a hand-made persona in RealMem's format (the real data is
// never part of the repository): session times in list order, labels of earlier sessions only, control
// characters, and a full run through the service scored against BM25 under the same protocol.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readRealmem } from '../../../eval/realmem/dataset.js';
import { BM25, BM25_OWN, BM25_UNFILTERED, COMBINED, COMBINED_UNFILTERED, evaluateRealmem, runRealmem, scoreSessions, withoutLater } from '../../../eval/realmem/run.js';
import { tmpDir } from '../../helpers/tmp.js';

const session = (uuid: string, date: string, turns: unknown[]) => ({ session_identifier: uuid, session_uuid: uuid, current_time: date, dialogue_turns: turns, extracted_memory: [{ content: { not: 'read' } }] });
const user = (content: string, query?: { id: string; category: string }) =>
  query ? { speaker: 'User', content, is_query: true, query_id: query.id, category_name: query.category } : { speaker: 'User', content, is_query: false, query_id: null };
const assistant = (content: string, labels?: string[]) => ({ speaker: 'Assistant', content, is_query: false, query_id: null, ...(labels ? { memory_session_uuids: labels } : {}) });

const PERSONA = {
  _metadata: { person_name: 'Test_Person' },
  dialogues: [
    session('a', '2025-01-06 (Monday)', [user('I want to learn Portuguese before my Lisbon trip in May.'), assistant('Great goal! A 20-minute daily routine with Anki decks works well for beginners.')]),
    session('b', '2025-01-06 (Monday)', [user('My budget for the trip is 900 euros.'), assistant('Noted: 900 euros. Flights first, then a flat near Alfama.')]),
    session('c', '2025-02-10 (Monday)', [user('I baked sourdough bread\u0002 today.'), assistant('Lovely, what flour did you use?')]),
    session('d', '2025-03-03 (Monday)', [
      user('How is my Portuguese routine going to fit the Lisbon budget?', { id: 'Q-1', category: 'Dynamic Incremental' }),
      // the labels: two earlier sessions, and this session itself (not earlier: dropped)
      assistant('Your Anki routine is free, so the 900 euros stay for the flat and flights.', ['a', 'b', 'd']),
    ]),
    session('e', '2025-03-04 (Tuesday)', [user('What flour do I use for bread?', { id: 'Q-2', category: 'Implicit Preference' }), assistant('You baked sourdough.', [])]),
  ],
};

function writePersona(): string {
  const dir = tmpDir('nc-realmem-');
  writeFileSync(join(dir, 'Test_Person_dialogues_256k.json'), JSON.stringify(PERSONA));
  return dir;
}

describe('RealMem reader', () => {
  it('dates sessions in list order, keeps only earlier sessions as labels and never reads extracted_memory', () => {
    const d = readRealmem(writePersona());
    assert.equal(d.turns.length, 10);
    // two sessions on one date: the second starts a minute later; turns a second apart
    assert.equal(d.turns.find((t) => t.id === 'Test_Person:s0:t0')!.created_at, '2025-01-06T00:00:00.000Z');
    assert.equal(d.turns.find((t) => t.id === 'Test_Person:s1:t1')!.created_at, '2025-01-06T00:01:01.000Z');
    assert.equal(d.turns.find((t) => t.id === 'Test_Person:s1:t1')!.role, 'assistant');
    assert.equal(d.turns.find((t) => t.id === 'Test_Person:s2:t0')!.content, 'I baked sourdough bread today.');
    assert.equal(d.repairs.controlCharsRemoved, 1);
    assert.equal(d.questions.length, 1);
    const [q] = d.questions;
    assert.deepEqual(q!.gold, ['Test_Person:s0', 'Test_Person:s1']);
    assert.equal(q!.created_before, '2025-03-03T00:03:00.000Z');
    assert.equal(q!.category, 'Dynamic Incremental');
    assert.equal(d.repairs.goldDropped, 1);
    assert.equal(d.repairs.questionsWithoutGold, 1);
  });

  it('names what is wrong with a folder that holds no persona', () => {
    assert.throws(() => readRealmem(tmpDir('nc-realmem-empty-')), /no RealMem persona files/);
  });
});

describe('RealMem scoring', () => {
  it('counts gold sessions holding a returned turn, all of them, and the first rank', () => {
    const sessionOf = (id: string) => id.split(':')[0];
    const s = scoreSessions(['x:1', 'a:1', 'a:2', 'x:2', 'x:3', 'b:1'], ['a', 'b'], sessionOf);
    assert.equal(s.recall[5], 0.5);
    assert.equal(s.recall[8], 1);
    assert.equal(s.all[5], 0);
    assert.equal(s.all[8], 1);
    assert.equal(s.rr, 0.5);
  });
});

describe('RealMem held-out protocol', () => {
  it('drops the turns of the query\'s session and later ones from a ranking, keeping the order of the rest', () => {
    const turns = [
      { id: 'early', created_at: '2025-01-01T00:00:00.000Z' },
      { id: 'middle', created_at: '2025-02-01T00:00:00.000Z' },
      { id: 'own', created_at: '2025-03-01T00:00:00.000Z' },
      { id: 'later', created_at: '2025-04-01T00:00:00.000Z' },
    ];
    const questions = [{ id: 'q', created_before: '2025-03-01T00:00:00.000Z' }];
    const cut = withoutLater({ turns, questions } as never, new Map([['q', ['later', 'middle', 'own', 'early', 'unknown']]]));
    assert.deepEqual(cut.get('q'), ['middle', 'early']);
  });
});

describe('RealMem run', () => {
  it('asks each query of earlier sessions only and writes realmem.json beside BM25', async () => {
    const dir = writePersona();
    await runRealmem(dir, { out: dir, ablation: true, signals: ['long_term'] });
    const out = JSON.parse(readFileSync(join(dir, 'realmem.json'), 'utf8'));
    for (const name of [COMBINED, BM25, BM25_OWN]) {
      assert.equal(out.systems[name].overall.n, 1, name);
      assert.equal(out.systems[name].categories['Dynamic Incremental'].n, 1, name);
    }
    // both earlier sessions share words with the query; the query's own session is filtered out
    assert.equal(out.systems[COMBINED].overall['recall@5'], 1);
    const rankings = JSON.parse(readFileSync(join(dir, 'realmem-rankings.json'), 'utf8'));
    const ids: string[] = rankings['Test_Person:s3:t0:Q-1'];
    assert.ok(ids.length > 0 && ids.every((id) => /^Test_Person:s[0-2]:/.test(id)), ids.join(', '));
    assert.ok(Object.keys(out.ablation).includes('long_term'));
    // asked again without the filter, at top_k 50, the later sessions cut from the ranking afterwards
    for (const name of [COMBINED_UNFILTERED, BM25_UNFILTERED]) assert.equal(out.systems[name].overall.n, 1, name);
    assert.equal(out.systems[COMBINED_UNFILTERED].overall['recall@5'], 1);
  });

  it('scores the same with every turn sent as the user\'s', async () => {
    const dir = writePersona();
    const progress = () => {};
    const asIs = await evaluateRealmem(dir, { ablate: [], progress });
    const asUser = await evaluateRealmem(dir, { ablate: [], roles: 'both-user', progress });
    assert.deepEqual(asIs.dataset.roles, { user: 5, assistant: 5 });
    assert.deepEqual(asUser.dataset.roles, { user: 10 });
    assert.deepEqual(asUser.systems[COMBINED], asIs.systems[COMBINED]);
    assert.deepEqual(asUser.rankings, asIs.rankings);
  });
});

describe('RealMem run: a query is asked at its own time', () => {
  it('reads "yesterday" in a query as the day before its session, not before the host clock', async () => {
    const dir = tmpDir('nc-realmem-time-');
    const persona = {
      _metadata: { person_name: 'Time_Person' },
      dialogues: [
        session('m', '2025-03-01 (Saturday)', [user('We decided the garden gets tomatoes. Garden decided: tomatoes in the garden beds.'), assistant('Tomatoes for the garden, decided.')]),
        session('y', '2025-04-01 (Tuesday)', [user('For the garden we decided on roses after all.'), assistant('Roses it is.')]),
        session('q', '2025-04-02 (Wednesday)', [user('What did we decide yesterday about the garden?', { id: 'Q-T', category: 'Temporal-reasoning' }), assistant('Roses.', ['y'])]),
      ],
    };
    writeFileSync(join(dir, 'Time_Person_dialogues_256k.json'), JSON.stringify(persona));
    await runRealmem(dir, { out: dir, ablation: false });
    const out = JSON.parse(readFileSync(join(dir, 'realmem.json'), 'utf8'));
    // BM25 ranks March's session first (more of the query's words); the day before the question is April 1
    assert.ok(out.systems[BM25].overall.mrr < 1);
    assert.equal(out.systems[COMBINED].overall.mrr, 1);
  });
});
