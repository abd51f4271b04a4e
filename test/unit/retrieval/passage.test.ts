import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { passagesOf } from '../../../src/embedding/passages.js';
import { LONG_TURN_CHARS, PASSAGE_CHARS, matchedPassage, passageWork, quoted, vectorPassage } from '../../../src/retrieval/passage.js';
import { stems } from '../../../src/retrieval/query-terms.js';

const wanted = (q: string) => new Set(stems(q));
const filler = (n: number) => Array.from({ length: n }, (_, i) => `Paragraph ${i} walks through the quarterly figures once more.`).join(' ');

describe('matchedPassage', () => {
  it('finds the window holding the most query words, at the end of a 30,000-character turn', () => {
    const tail = 'Finally, the harbour ferry to Inishmore leaves at seven from pier four.';
    const content = `${filler(600)} ${tail}`.slice(-30_000);
    assert.ok(content.length >= 29_000);
    const p = matchedPassage(content, wanted('ferry to Inishmore from which pier'));
    assert.ok(p, 'a passage');
    assert.ok(p.end - p.start <= PASSAGE_CHARS, `at most ${PASSAGE_CHARS} characters, got ${p.end - p.start}`);
    assert.equal(p.text, content.slice(p.start, p.end));
    assert.ok(p.text.includes('harbour ferry to Inishmore leaves at seven from pier four'), p.text);
  });

  it('prefers the window with more distinct query words over one repeating a single word', () => {
    const content = `${'figures figures figures. '.repeat(30)}${filler(20)} the budget for the Lisbon trip is 900 euros ${filler(20)}`;
    const p = matchedPassage(content, wanted('figures budget Lisbon trip euros'));
    assert.ok(p?.text.includes('budget for the Lisbon trip is 900 euros'), p?.text);
  });

  it('has no passage for a short turn, or for a long one without a query word', () => {
    assert.equal(matchedPassage('the ferry leaves at seven', wanted('ferry')), null);
    assert.equal(matchedPassage(filler(100), wanted('ferry')), null);
  });

  it('cuts a text without spaces where it must, never past its matches', () => {
    const content = `${'x'.repeat(5_000)} ferry ${'y'.repeat(5_000)}`;
    const p = matchedPassage(content, wanted('ferry'));
    assert.ok(p && p.start <= 5_001 && p.end >= 5_006 && p.end - p.start <= PASSAGE_CHARS + 80, JSON.stringify(p && { s: p.start, e: p.end }));
  });
});

describe('matchedPassage on a turn asked about again', () => {
  it('reads a 30,000-character turn once, whatever queries ask of it, and finds what a scan finds', () => {
    const tail = 'Finally, the harbour ferry to Inishmore leaves at seven from pier four.';
    const content = `${filler(300)} budget talk for Lisbon ${filler(300)} ${tail}`.slice(-30_000);
    const before = passageWork.chars;
    const first = matchedPassage(content, wanted('ferry to Inishmore from which pier'));
    const second = matchedPassage(content, wanted('the budget for Lisbon'));
    const again = matchedPassage(content, wanted('ferry to Inishmore from which pier'));
    assert.equal(passageWork.chars - before, content.length);
    assert.ok(first?.text.includes('harbour ferry to Inishmore leaves at seven from pier four'), first?.text);
    assert.ok(second?.text.includes('budget talk for Lisbon'), second?.text);
    assert.deepEqual(again, first);
    // the same words found in a copy read afresh (a row read from the store again), without reading it
    assert.deepEqual(matchedPassage([...content].join(''), wanted('ferry to Inishmore from which pier')), first);
    assert.equal(passageWork.chars - before, content.length);
  });

  it('orders matches of several query words as the text does', () => {
    // "pier" before "ferry" in the text, the query naming them the other way: the window spans both
    const content = `${filler(40)} at pier four the ferry waits ${filler(40)} ferry ${filler(40)}`;
    const p = matchedPassage(content, wanted('ferry pier'));
    assert.ok(p?.text.includes('at pier four the ferry waits'), p?.text);
  });
});

describe('quoted', () => {
  it('quotes a short turn whole and a long one by its passage, or its start, with ellipses', () => {
    assert.equal(quoted('short', undefined), 'short');
    const long = filler(200);
    assert.ok(long.length > LONG_TURN_CHARS);
    const start = quoted(long, undefined);
    assert.ok(start.length <= PASSAGE_CHARS + 2 && start.endsWith(' …') && long.startsWith(start.slice(0, -2)), start);
    const mid = quoted(long, { start: 2_000, end: 2_400, text: long.slice(2_000, 2_400) });
    assert.ok(mid.startsWith('… ') && mid.endsWith(' …') && mid.includes(long.slice(2_010, 2_390)));
  });
});

describe('vectorPassage: where the semantic tier matched a long turn', () => {
  it("is the start of the embedded passage, at most PASSAGE_CHARS and cut between words; none for a short turn or a part it lacks", () => {
    const content = filler(400);
    const part = 7;
    const embedded = passagesOf(content)[part - 1]!;
    const p = vectorPassage(content, part);
    assert.ok(p);
    assert.equal(p.start, embedded.start);
    assert.ok(p.end <= embedded.end && p.end - p.start <= PASSAGE_CHARS, `${p.start}..${p.end}`);
    assert.equal(p.text, content.slice(p.start, p.end));
    assert.match(content[p.end] ?? ' ', /\s/, 'cut between words');
    assert.equal(vectorPassage(filler(3), 1), null);
    assert.equal(vectorPassage(content, 10_000), null);
  });
});
