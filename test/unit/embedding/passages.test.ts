import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entryPoints, MAX_PASSAGES, PASSAGE_MIN_WORDS, PASSAGE_STEP, PASSAGE_WORDS, passagesOf, textsToEmbed } from '../../../src/embedding/passages.js';
import type { VectorPayload } from '../../../src/ports/vector-index.js';

const text = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const wordsOf = (s: string) => s.split(/\s+/).filter(Boolean);

describe('passagesOf: the passages a long turn is embedded as', () => {
  it('gives none to a turn of at most 1.5 passages of words', () => {
    assert.deepEqual(passagesOf(text(PASSAGE_MIN_WORDS)), []);
    assert.deepEqual(passagesOf(''), []);
    assert.equal(passagesOf(text(PASSAGE_MIN_WORDS + 1)).length, 3);
  });

  it('cuts PASSAGE_WORDS-word windows every PASSAGE_STEP words, the last ending at the last word, each the text between its offsets', () => {
    const content = `  ${text(400)}\n`;
    const ps = passagesOf(content);
    assert.equal(ps.length, Math.ceil((400 - PASSAGE_WORDS) / PASSAGE_STEP) + 1);
    ps.forEach((p, i) => {
      assert.equal(p.part, i + 1);
      assert.equal(p.text, content.slice(p.start, p.end));
      assert.equal(wordsOf(p.text).length, PASSAGE_WORDS);
      assert.equal(wordsOf(p.text)[0], `w${i * PASSAGE_STEP}`);
    });
    assert.equal(wordsOf(ps.at(-1)!.text).at(-1), 'w399');
  });

  it('caps a 30,000-character turn at MAX_PASSAGES, spread over all of it with no word left out', () => {
    const content = Array.from({ length: 5_000 }, (_, i) => `word${i}`).join(' ').slice(0, 30_000);
    const ps = passagesOf(content);
    assert.equal(ps.length, MAX_PASSAGES);
    assert.equal(ps[0]!.start, 0);
    assert.equal(ps.at(-1)!.end, content.length);
    for (let i = 1; i < ps.length; i++) assert.ok(ps[i]!.start < ps[i - 1]!.end, `passage ${i + 1} overlaps the one before`);
  });

  it('the texts and points of an entry: the whole text as part 0, then each passage', () => {
    const content = text(200);
    const texts = textsToEmbed(content);
    assert.equal(texts[0], content);
    assert.deepEqual(texts.slice(1), passagesOf(content).map((p) => p.text));
    assert.deepEqual(textsToEmbed('short'), ['short']);
    const payload = { user_id: 'u', content } as VectorPayload;
    const points = entryPoints('id', payload, texts.map(() => new Float32Array(2)));
    assert.deepEqual(points.map((p) => [p.id, p.part, p.payload === payload]), texts.map((_, i) => ['id', i, true]));
  });
});
