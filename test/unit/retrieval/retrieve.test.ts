// The retrieval pass end to end on a real SQLite file (hash embedder): time questions, a question and
// its answer as context, participant names, and an update outranking what it replaces.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/roots/library.js';
import { testMemory } from '../../helpers/services.js';

const turn = (id: string, session: string, created_at: string, role: 'user' | 'assistant', name: string, content: string, user_id = 'u1') => ({
  id, user_id, session_id: session, created_at, role, name, content,
});

describe('Retriever on a real store', () => {
  let memory: Memory;

  before(async () => {
    ({ memory } = await testMemory({}, { reconcile: false }));
    await memory.addTurns([
      turn('sail', 's1', '2024-03-09T10:00:00.000Z', 'user', 'Maya', 'Went sailing on the lake with my cousin, great wind.'),
      turn('sail-reply', 's1', '2024-03-09T10:01:00.000Z', 'assistant', 'Nova', 'That sounds like a lovely day out!'),
      turn('hike', 's2', '2024-05-11T10:00:00.000Z', 'user', 'Maya', 'Went hiking in the hills, very muddy.'),
      turn('dentist-q', 's3', '2024-06-01T09:00:00.000Z', 'assistant', 'Nova', 'Which dentist do you go to? I can book the check-up.'),
      turn('dentist-a', 's3', '2024-06-01T09:01:00.000Z', 'user', 'Maya', 'dr okafor'),
      turn('dentist-ack', 's3', '2024-06-01T09:02:00.000Z', 'assistant', 'Nova', 'Booked, thanks!'),
      turn('dolores', 's4', '2024-06-02T09:00:00.000Z', 'user', 'Dolores', "I'm training for a swim across the bay, any tips?"),
      turn('car-old', 's5', '2024-01-10T09:00:00.000Z', 'user', 'Maya', 'I drive a blue Mazda, nothing fancy.'),
      turn('car-new', 's6', '2024-08-01T09:00:00.000Z', 'user', 'Maya', 'Finally sold my old car, I drive a red Fiat now.'),
      turn('other-sail', 'x1', '2024-03-10T10:00:00.000Z', 'user', 'Omar', 'Went sailing in March too, capsized twice.', 'u2'),
    ]);
    await memory.idle();
  });
  after(() => memory.close());

  it('answers a time question from the turns of that period', async () => {
    const r = await memory.retrieve({ query: 'What did I do in March 2024?', user_id: 'u1', session_id: 'new', top_k: 5 });
    assert.equal(r.results[0]?.id, 'sail');
    assert.equal(r.results[0]?.explain.in_period, true);
    assert.ok(r.results[0]!.explain.period_rank !== null);
    for (const x of r.results) assert.equal(x.explain.in_period, x.created_at.startsWith('2024-03'));
    assert.ok(r.results.every((x) => x.user_id === 'u1'), 'never another user\'s memories');
  });

  it('brings the answer along with the assistant question that matched', async () => {
    const r = await memory.retrieve({ query: 'Which dentist do I go to?', user_id: 'u1', session_id: 'new', top_k: 5 });
    const ids = r.results.map((x) => x.id);
    // the question matched, but it answers nothing: the answer it leads to ranks first
    assert.deepEqual(ids.slice(0, 2), ['dentist-a', 'dentist-q']);
    const answer = r.results.find((x) => x.id === 'dentist-a');
    assert.ok(answer, `the short answer is retrieved: ${ids.join(', ')}`);
    assert.ok(answer.explain.context_of === 'dentist-q' || answer.explain.ranks.semantic !== undefined);
    assert.match(r.prompt_blocks, /dr okafor/);
  });

  it('finds what a named participant said when the query names them', async () => {
    const r = await memory.retrieve({ query: 'What is Dolores training for?', user_id: 'u1', top_k: 3 });
    assert.equal(r.results[0]?.id, 'dolores');
    assert.equal(r.results[0]?.name, 'Dolores');
  });

  it('ranks an update above the statement it replaces', async () => {
    const r = await memory.retrieve({ query: 'What car do I drive?', user_id: 'u1', top_k: 5 });
    const ids = r.results.map((x) => x.id);
    assert.ok(ids.indexOf('car-new') >= 0 && ids.indexOf('car-new') < ids.indexOf('car-old'), ids.join(', '));
    const old = r.results.find((x) => x.id === 'car-old')!;
    assert.equal(old.explain.superseded_by, 'car-new');
    assert.equal(old.explain.superseded_at, '2024-08-01T09:00:00.000Z');
    // the prompt says which is current, and when the older one was replaced
    assert.match(r.prompt_blocks, /\[2024-01-10, earlier: replaced on 2024-08-01\] user Maya: I drive a blue Mazda/);
    assert.match(r.prompt_blocks, /\[2024-08-01, latest: replaces an earlier memory\] user Maya: Finally sold my old car/);
  });

  it('answers "where do I live?" with the move, the older city marked as replaced', async () => {
    await memory.addTurns([
      turn('home-old', 's7', '2024-02-03T09:00:00.000Z', 'user', 'Maya', 'I live in Leeds, close to the station.'),
      turn('home-new', 's8', '2024-09-14T09:00:00.000Z', 'user', 'Maya', 'We moved to Bristol last month!'),
    ]);
    await memory.idle();
    const r = await memory.retrieve({ query: 'Where do I live?', user_id: 'u1', session_id: 'new', top_k: 5 });
    const ids = r.results.map((x) => x.id);
    assert.equal(ids[0], 'home-new', r.results.map((x) => x.content).join(' | '));
    const old = r.results.find((x) => x.id === 'home-old');
    assert.ok(old, ids.join(', '));
    assert.equal(old.explain.superseded_by, 'home-new');
    assert.match(r.prompt_blocks, /\[2024-02-03, earlier: replaced on 2024-09-14\] user Maya: I live in Leeds/);
    // …and dates the move itself: "last month" of a turn said in September
    assert.match(r.prompt_blocks, /\[2024-09-14, latest: replaces an earlier memory, "last month" = 2024-08-01 to 2024-08-31\] user Maya: We moved to Bristol/);
  });

  it("answers \"what is my sister's job?\" with the sister's job: the user's own new job replaces nothing of hers", async () => {
    await memory.addTurns([
      turn('sister-job', 's9', '2024-03-12T09:00:00.000Z', 'user', 'Maya', 'My sister Ana just started a new job as a nurse', 'u3'),
      turn('own-job', 's10', '2024-07-20T09:00:00.000Z', 'user', 'Maya', 'I switched jobs, I was hired as a product manager', 'u3'),
    ]);
    await memory.idle();
    const r = await memory.retrieve({ query: "What is my sister's job?", user_id: 'u3', session_id: 'new', top_k: 5 });
    assert.equal(r.results[0]?.id, 'sister-job', r.results.map((x) => x.content).join(' | '));
    for (const x of r.results) assert.equal(x.explain.superseded_by, null, x.id);
    assert.doesNotMatch(r.prompt_blocks, /replace/);
    // the user's own job, asked about, is still the newest statement of it
    const own = await memory.retrieve({ query: 'What is my job?', user_id: 'u3', session_id: 'new', top_k: 5 });
    assert.equal(own.results[0]?.id, 'own-job', own.results.map((x) => x.content).join(' | '));
    assert.equal(own.results.find((x) => x.id === 'sister-job')?.explain.superseded_by ?? null, null);
  });

  it('drops results below min_score and never pads with filler', async () => {
    const all = await memory.retrieve({ query: 'Which dentist do I go to?', user_id: 'u1', session_id: 's3', top_k: 10 });
    // the session's newest turns are candidates whatever the query, but "Booked, thanks!" says nothing
    assert.ok(!all.results.some((x) => x.id === 'dentist-ack'), all.results.map((x) => x.content).join(' | '));
    const cut = all.results[1]!.score;
    const strong = await memory.retrieve({ query: 'Which dentist do I go to?', user_id: 'u1', session_id: 's3', top_k: 10, min_score: cut });
    assert.ok(strong.results.length >= 2 && strong.results.length < all.results.length);
    assert.ok(strong.results.every((x) => x.score >= cut));
    await assert.rejects(async () => memory.retrieve({ query: 'dentist', user_id: 'u1', min_score: 2 }), /min_score: Too big/);
  });

  it('reports each tier and never fails on FTS syntax in the query', async () => {
    for (const query of ['"', 'NEAR OR *', '-dentist', 'dentist" OR "x', '(((']) {
      const r = await memory.retrieve({ query, user_id: 'u1', top_k: 3 });
      assert.equal(r.tiers.long_term.status, 'ok', query);
    }
  });
});

describe('Retriever on a period named with nothing else to match', () => {
  let memory: Memory;

  before(async () => {
    ({ memory } = await testMemory({}, { reconcile: false }));
    // the assistant's reply is the newer one and as important by its words: only the question's
    // person tells which of the two "what did I do" asks about
    await memory.addTurns([
      turn('shelf', 'o1', '2024-10-05T10:00:00.000Z', 'user', 'Maya', 'Built a bookshelf from scratch for the spare room, only one screw left over.', 'u4'),
      turn('advice', 'o1', '2024-10-05T10:01:00.000Z', 'assistant', 'Nova', 'Try breaking it into three small steps and start with the easiest one.', 'u4'),
    ]);
    await memory.idle();
  });
  after(() => memory.close());

  it('lists the asker\'s own turns first for a question in the first person, the assistant\'s for one in the second', async () => {
    const mine = await memory.retrieve({ query: 'What did I do in October 2024?', user_id: 'u4', session_id: 'new', top_k: 2 });
    assert.deepEqual(mine.results.map((x) => x.id), ['shelf', 'advice']);
    const yours = await memory.retrieve({ query: 'What did you say in October 2024?', user_id: 'u4', session_id: 'new', top_k: 2 });
    assert.deepEqual(yours.results.map((x) => x.id), ['advice', 'shelf']);
  });
});

describe('Retriever on a period that holds none of the user\'s entries', () => {
  let memory: Memory;
  let services: Services;

  before(async () => {
    ({ memory, services } = await testMemory({}, { reconcile: false }));
    // every entry is older than "today": the day asked about is empty, and only its word tells the
    // turn that reported a day's water from those that talk about water in general
    await memory.addTurns([
      turn('tap', 'w1', '2024-09-02T08:00:00.000Z', 'user', 'Maya', 'Our tap water tastes of chlorine, should I drink bottled water instead?', 'u5'),
      turn('tap-reply', 'w1', '2024-09-02T08:01:00.000Z', 'assistant', 'Nova', 'Tap water is safe to drink; a carbon filter jug takes the chlorine taste out of the water.', 'u5'),
      turn('plants', 'w2', '2024-09-10T08:00:00.000Z', 'user', 'Maya', 'How much water do the basil plants need in summer? I water them daily.', 'u5'),
      turn('log', 'w3', '2024-09-20T20:00:00.000Z', 'user', 'Maya', 'Today is a solid 3 litres, the new bottle helps me drink.', 'u5'),
      turn('walk', 'w4', '2024-09-21T08:00:00.000Z', 'user', 'Maya', 'Walked to the bakery, it was drizzling.', 'u5'),
    ]);
    await memory.idle();
  });
  after(() => memory.close());

  it('searches the time words as words of the query', async () => {
    const r = await memory.retrieve({ query: 'How much water did I drink today?', user_id: 'u5', session_id: 'new', top_k: 3 });
    const log = r.results.find((x) => x.id === 'log');
    assert.ok(log, r.results.map((x) => `${x.id}: ${x.content}`).join(' | '));
    // without "today" the turn shares one word with the question and the tap water talk two
    assert.equal(log.explain.ranks.long_term, 1);
    assert.equal(log.explain.in_period, false);
  });

  it('searches the text once: an empty period has no matches to look for', async () => {
    const searches: string[] = [];
    const { longTerm } = services;
    const searchText = longTerm.searchText.bind(longTerm);
    longTerm.searchText = (userId, query, o) => {
      searches.push(query);
      return searchText(userId, query, o);
    };
    try {
      await memory.retrieve({ query: 'How much water did I drink today?', user_id: 'u5', session_id: 'new', top_k: 3 });
    } finally {
      longTerm.searchText = searchText;
    }
    assert.equal(searches.length, 1, searches.join(' | '));
    assert.match(searches[0]!, /today/);
  });
});

describe('Retriever on a conversation between two people', () => {
  let memory: Memory;
  const at = (i: number) => new Date(Date.UTC(2023, 4, 8, 13, 0, i * 30)).toISOString();
  const say = (i: number, name: string, content: string) => ({ id: `t${i}`, user_id: 'pair', session_id: 'd1', created_at: at(i), role: 'user' as const, name, content });

  before(async () => {
    ({ memory } = await testMemory({}, { reconcile: false }));
    await memory.addTurns([
      say(0, 'Caroline', 'Melanie, your painting of the lake is so lovely, I keep thinking about it!'),
      say(1, 'Melanie', 'Thanks! I painted a sunrise over the hills last weekend too.'),
      say(2, 'Caroline', 'I started a pottery class, it is so relaxing.'),
      say(3, 'Melanie', 'We got two kittens last month, the kids adore them.'),
      say(4, 'Caroline', 'Aww, what are their names?'),
      say(5, 'Melanie', 'Luna and Oliver!'),
      say(6, 'Caroline', 'Cute! Talk soon.'),
      say(7, 'Melanie', 'My mom and I made dinner together last night.'),
      say(8, 'Caroline', 'Yum! What did you two have?'),
      say(9, 'Melanie', 'Salads, sandwiches and homemade desserts.'),
      say(11, 'Melanie', 'I went to a pride parade with my sister last week.'),
      say(12, 'Caroline', 'Oh wow, how was it?'),
      say(13, 'Melanie', 'So much love, I felt welcome in the crowd.'),
      say(14, 'Melanie', 'Tried coconut milk icecream for the first time, the kids adored it.'),
    ]);
    await memory.idle();
  });
  after(() => memory.close());

  it('ranks what the named person said above what the other said about them', async () => {
    const r = await memory.retrieve({ query: 'What has Melanie painted?', user_id: 'pair', top_k: 3 });
    assert.equal(r.results[0]?.id, 't1', r.results.map((x) => `${x.name}: ${x.content}`).join(' | '));
  });

  it('dates in the prompt the event a turn says happened "yesterday"', async () => {
    await memory.addTurns([say(10, 'Melanie', 'I ran a charity race for mental health yesterday, so proud!')]);
    await memory.idle();
    const r = await memory.retrieve({ query: 'When did Melanie run the charity race?', user_id: 'pair', top_k: 3 });
    assert.equal(r.results[0]?.id, 't10');
    assert.match(r.prompt_blocks, /- \[2023-05-08, "yesterday" = 2023-05-07\] user Melanie: I ran a charity race/);
  });

  it('brings the answer after the other person\'s question', async () => {
    const r = await memory.retrieve({ query: "What are the names of Melanie's kittens?", user_id: 'pair', top_k: 5 });
    const answer = r.results.find((x) => x.id === 't5');
    assert.ok(answer, r.results.map((x) => x.content).join(' | '));
    // brought by the question it answers or by the statement that question asks about (with the
    // user's own statistics the speaker's name weighs in: Melanie's statement t3 ranks first)
    assert.ok(['t3', 't4'].includes(answer.explain.context_of ?? ''), `context of ${answer.explain.context_of}`);
  });

  it('brings the answer to the other person\'s follow-up question with the statement it follows', async () => {
    const r = await memory.retrieve({ query: 'What did Melanie cook for dinner with her mom?', user_id: 'pair', top_k: 5 });
    const answer = r.results.find((x) => x.id === 't9');
    assert.ok(answer, r.results.map((x) => x.content).join(' | '));
    assert.equal(answer.explain.context_of, 't7');
    // the follow-up question itself answers nothing: it ranks below the answer it leads to
    const followUp = r.results.findIndex((x) => x.id === 't8');
    assert.ok(followUp === -1 || followUp > r.results.indexOf(answer));
  });

  it('adds no neighbours for a message about a topic (12+ content words): it refers to a conversation, not to one turn', async () => {
    const message = 'Melanie, about those two kittens you adopted with the kids: I keep wondering whether they settled, what they eat, which toys they like, and their names';
    const r = await memory.retrieve({ query: message, user_id: 'pair', top_k: 5 });
    assert.ok(r.results.some((x) => x.id === 't3'), r.results.map((x) => x.content).join(' | '));
    assert.ok(r.results.every((x) => x.explain.context_of === null), r.results.map((x) => `${x.id} ${x.explain.context_of}`).join(', '));
  });

  it('reads a short message of two sentences as a message too: no neighbours', async () => {
    // the same question as the one whose answer comes as context above, with a greeting before it
    const r = await memory.retrieve({ query: "Hi again. What are the names of Melanie's kittens?", user_id: 'pair', top_k: 5 });
    assert.ok(r.results.length > 0);
    assert.ok(r.results.every((x) => x.explain.context_of === null), r.results.map((x) => `${x.id} ${x.explain.context_of}`).join(', '));
  });

  it('brings the statement that a follow-up question asked about, when the answer is the hit', async () => {
    // only the answer shares words with the query; what it answers about is two turns before it
    const r = await memory.retrieve({ query: 'Why did Melanie feel welcome in the crowd?', user_id: 'pair', top_k: 5 });
    assert.equal(r.results[0]?.id, 't13', r.results.map((x) => x.content).join(' | '));
    const statement = r.results.find((x) => x.id === 't11');
    assert.ok(statement, r.results.map((x) => x.content).join(' | '));
    assert.equal(statement.explain.context_of, 't13');
    assert.ok(statement.score < r.results[0]!.score);
  });
});
