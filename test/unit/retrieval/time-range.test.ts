import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { regexOverruns } from '../../helpers/backtracks.js';
import { aboutPeriod, inRange, mentionedDate, mentionedWork, parseTimeRange, withoutTimeExpression } from '../../../src/retrieval/time-range.js';

// a Friday evening in June
const NOW = Date.parse('2025-06-20T18:00:00.000Z');

function range(query: string, now = NOW): [string, string, string] | null {
  const r = parseTimeRange(query, now);
  return r ? [r.from.slice(0, 10), r.to.slice(0, 10), r.text] : null;
}

describe('parseTimeRange', () => {
  it('reads month names as the most recent such month, "last" skipping the current one', () => {
    assert.deepEqual(range('What did I do last May?'), ['2025-05-01', '2025-06-01', 'last May']);
    assert.deepEqual(range('what happened in may'), ['2025-05-01', '2025-06-01', 'in may']);
    assert.deepEqual(range('What was I up to back in March?'), ['2025-03-01', '2025-04-01', 'back in March']);
    assert.deepEqual(range('anything during July?'), ['2024-07-01', '2024-08-01', 'during July']);
    assert.deepEqual(range('what did I do last June?'), ['2024-06-01', '2024-07-01', 'last June']);
    assert.deepEqual(range('in June'), ['2025-06-01', '2025-07-01', 'in June']);
    assert.deepEqual(range('plans for next March'), ['2026-03-01', '2026-04-01', 'next March']);
  });

  it('takes an explicit year, a day, and parts of a month', () => {
    assert.deepEqual(range('Remind me what I got up to in April 2024.'), ['2024-04-01', '2024-05-01', 'in April 2024']);
    assert.deepEqual(range('what did Priya do during Sept 2024'), ['2024-09-01', '2024-10-01', 'during Sept 2024']);
    assert.deepEqual(range('on the 3rd of May')?.slice(0, 2), ['2025-05-03', '2025-05-04']);
    assert.deepEqual(range('May 3rd, 2024 was fun')?.slice(0, 2), ['2024-05-03', '2024-05-04']);
    assert.deepEqual(range('early March')?.slice(0, 2), ['2025-03-01', '2025-03-11']);
    assert.deepEqual(range('late February')?.slice(0, 2), ['2025-02-21', '2025-03-01']);
    assert.deepEqual(range('the notes from 2024-05-03')?.slice(0, 2), ['2024-05-03', '2024-05-04']);
    assert.deepEqual(range('the notes from 2024-11')?.slice(0, 2), ['2024-11-01', '2024-12-01']);
  });

  it('does not read the verb "may" or "march" as a month', () => {
    assert.equal(parseTimeRange('May I ask what my dog is called?', NOW), null);
    assert.equal(parseTimeRange('what may help with back pain', NOW), null);
    assert.equal(parseTimeRange('we march on regardless', NOW), null);
    assert.equal(parseTimeRange('what is my dog called', NOW), null);
    // capitalized in the middle of a sentence, it is the month
    assert.deepEqual(range('anything from May worth remembering')?.slice(0, 2), ['2025-05-01', '2025-06-01']);
  });

  it('reads relative expressions against now', () => {
    assert.deepEqual(range('what did I do yesterday')?.slice(0, 2), ['2025-06-19', '2025-06-20']);
    // NOW is a Friday: "last Friday" is a week back, "last Monday" this week's
    assert.deepEqual(range('what did I do last Friday?'), ['2025-06-13', '2025-06-14', 'last Friday']);
    assert.deepEqual(range('anything last monday'), ['2025-06-16', '2025-06-17', 'last monday']);
    assert.deepEqual(range('what did I say today')?.slice(0, 2), ['2025-06-20', '2025-06-20']);
    assert.deepEqual(range('what did I do last week'), ['2025-06-09', '2025-06-16', 'last week']);
    assert.deepEqual(range('what did I do last month'), ['2025-05-01', '2025-06-01', 'last month']);
    assert.deepEqual(range('anything earlier this month?')?.slice(0, 2), ['2025-06-01', '2025-06-20']);
    assert.deepEqual(range('what happened last year')?.slice(0, 2), ['2024-01-01', '2025-01-01']);
    assert.deepEqual(range('what did we discuss in 2024')?.slice(0, 2), ['2024-01-01', '2025-01-01']);
    assert.deepEqual(range('last weekend')?.slice(0, 2), ['2025-06-14', '2025-06-16']);
    assert.deepEqual(range('in the past 3 days')?.slice(0, 2), ['2025-06-17', '2025-06-20']);
  });

  it('reads "N units ago" as the unit around that point', () => {
    const r = parseTimeRange('what did I do two weeks ago?', NOW)!;
    assert.equal(r.text, 'two weeks ago');
    assert.equal(Date.parse(r.from), NOW - 17.5 * 86_400_000);
    assert.equal(Date.parse(r.to), NOW - 10.5 * 86_400_000);
    assert.ok(parseTimeRange('a couple of months ago', NOW));
    assert.ok(parseTimeRange('3 days ago', NOW));
  });

  it('reads seasons, "last" skipping one in progress', () => {
    assert.deepEqual(range('last summer')?.slice(0, 2), ['2024-06-01', '2024-09-01']);
    assert.deepEqual(range('this summer')?.slice(0, 2), ['2025-06-01', '2025-09-01']);
    assert.deepEqual(range('what did I do in the spring')?.slice(0, 2), ['2025-03-01', '2025-06-01']);
    assert.deepEqual(range('winter 2024')?.slice(0, 2), ['2024-12-01', '2025-03-01']);
    assert.equal(parseTimeRange('spring cleaning tips', NOW), null);
  });

  it('takes the first expression of the query', () => {
    assert.deepEqual(range('in March and then in May')?.slice(0, 2), ['2025-03-01', '2025-04-01']);
  });

  it('returns null for a query without time', () => {
    for (const q of ['', 'where do I live?', 'what is 2+2', 'my 30th birthday party', 'NEAR OR "*"']) assert.equal(parseTimeRange(q, NOW), null, q);
  });
});

describe('withoutTimeExpression', () => {
  it('takes the time expression and present-tense phrases out of the text to search', () => {
    assert.equal(withoutTimeExpression('What did I do last May?', parseTimeRange('What did I do last May?', NOW)), 'What did I do?');
    assert.equal(withoutTimeExpression('Where do I live these days?', null), 'Where do I live?');
    assert.equal(withoutTimeExpression('What car do I drive at the moment', null), 'What car do I drive');
    assert.equal(withoutTimeExpression('dogs', null), 'dogs');
  });

  it('joins punctuation to the word before it and collapses every other run of whitespace', () => {
    assert.equal(withoutTimeExpression(' where \t do\n\n I live \u00a0 ?  and ,  why ? ? ', null), 'where do I live? and, why??');
  });

  // issue 25: the query of a chat message is its first 4,000 characters, and `\s+([?.!,])` retried a
  // run of whitespace from each of its characters (4,000 spaces: ~8 million backtracks)
  it('reads a query of whitespace runs in linear work', () => {
    const overruns = regexOverruns(
      `const { withoutTimeExpression } = await src('retrieval/time-range.js');
      for (const run of [' ', '\\t', '\\n', ' \\n']) withoutTimeExpression('Note:' + run.repeat(2000) + 'x' + run.repeat(2000), null);`,
      1_000,
    );
    assert.deepEqual(overruns, []);
  });
});

describe('a relative expression with the day it counts back from', () => {
  it('reads "last Friday on 23 January, 2022" from that day, not from now', () => {
    const q = 'What did Joanna just finish last Friday on 23 January, 2022?';
    const r = parseTimeRange(q, NOW)!;
    assert.deepEqual([r.from, r.to], ['2022-01-21T00:00:00.000Z', '2022-01-22T00:00:00.000Z']);
    assert.equal(withoutTimeExpression(q, r), 'What did Joanna just finish?');
    const w = parseTimeRange('What did Maria do last weekend before April 10, 2023?', NOW)!;
    assert.deepEqual([w.from, w.to], ['2023-04-08T00:00:00.000Z', '2023-04-10T00:00:00.000Z']);
  });

  it('counts from now without such a day, and never anchors to a month', () => {
    const r = parseTimeRange('What did I do last Friday?', NOW)!;
    assert.ok(Date.parse(r.from) > NOW - 8 * 86_400_000);
    const m = parseTimeRange('Where was I last week in May 2023?', NOW)!;
    assert.equal(m.text, 'last week');
  });
});

describe('aboutPeriod', () => {
  it('counts a turn said after the period that dates its event into it', () => {
    const period = parseTimeRange('in 2022', NOW)!;
    const turn = { kind: 'turn', created_at: '2023-03-04T10:00:00.000Z', content: 'Last year I helped renovate a community center back home.' };
    assert.equal(aboutPeriod(turn, period), true);
    assert.equal(aboutPeriod({ ...turn, content: 'I helped renovate a community center back home.' }, period), false);
    assert.equal(aboutPeriod({ ...turn, kind: 'summary' }, period), false);
    assert.equal(aboutPeriod({ ...turn, created_at: '2022-06-01T00:00:00.000Z', content: 'x' }, period), true);
  });
});

describe('inRange', () => {
  it('includes the start and excludes the end', () => {
    const r = parseTimeRange('in May', NOW)!;
    assert.equal(inRange('2025-05-01T00:00:00.000Z', r), true);
    assert.equal(inRange('2025-05-31T23:59:59.999Z', r), true);
    assert.equal(inRange('2025-06-01T00:00:00.000Z', r), false);
    assert.equal(inRange('2024-05-15T00:00:00.000Z', r), false);
  });
});

describe('mentionedDate', () => {
  it('dates an event a memory counts back to from when it was said', () => {
    const said = '2023-05-08T13:56:00.000Z'; // a Monday
    assert.deepEqual(mentionedDate('I went to a support group yesterday, so powerful.', said), { text: 'yesterday', from: '2023-05-07', to: '2023-05-07' });
    assert.deepEqual(mentionedDate('Last week I went to a pride parade.', said), { text: 'Last week', from: '2023-05-01', to: '2023-05-07' });
    assert.deepEqual(mentionedDate('Last Friday I went to a council meeting.', said), { text: 'Last Friday', from: '2023-05-05', to: '2023-05-05' });
  });

  it('leaves alone what may look ahead, and text naming no time', () => {
    assert.equal(mentionedDate("I'm going to Paris in May!", '2023-05-08T13:56:00.000Z'), null);
    assert.equal(mentionedDate('I love pottery.', '2023-05-08T13:56:00.000Z'), null);
    // "last" and "past" inside other words count back from nothing; the same text with the word does
    assert.equal(mentionedDate('We blasted music at the pastry shop in May.', '2023-05-08T13:56:00.000Z'), null);
    assert.deepEqual(mentionedDate('We blasted music at the pastry shop last May.', '2023-05-08T13:56:00.000Z'), { text: 'last May.', from: '2022-05-01', to: '2022-05-31' });
  });
});

describe('mentionedRange on a long turn asked about again', () => {
  const long = (tail: string) => `${'We went over the quarterly figures at length, past the usual points. '.repeat(450)}${tail}`;

  it('reads a 30,000-character turn once per moment it was said, for aboutPeriod and the prompt line alike', () => {
    const content = long('Yesterday I finally booked the ferry.');
    assert.ok(content.length > 30_000);
    const turn = { kind: 'turn', content, created_at: '2023-05-08T12:00:00.000Z' };
    const before = mentionedWork.chars;
    const may7 = { from: '2023-05-07T00:00:00.000Z', to: '2023-05-08T00:00:00.000Z', text: 'x', index: 0 };
    assert.equal(aboutPeriod(turn, may7), true);
    assert.deepEqual(mentionedDate(content, turn.created_at), { text: 'Yesterday', from: '2023-05-07', to: '2023-05-07' });
    assert.equal(aboutPeriod({ ...turn, content: [...content].join('') }, may7), true);
    assert.equal(mentionedWork.chars - before, content.length);
  });

  it('reads the same text said at another moment from that moment', () => {
    const content = long('Yesterday I finally booked the ferry, again.');
    assert.equal(mentionedDate(content, '2023-05-08T12:00:00.000Z')?.from, '2023-05-07');
    assert.equal(mentionedDate(content, '2024-01-02T12:00:00.000Z')?.from, '2024-01-01');
    assert.equal(mentionedDate(content, '2023-05-08T12:00:00.000Z')?.from, '2023-05-07');
  });
});
