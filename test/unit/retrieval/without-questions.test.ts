import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asksOnly, withoutQuestions } from '../../../src/retrieval/rank.js';
import { mulberry32 } from '../../fixtures/random.js';

/**
 * asksOnly takes the questions out of a turn in one pass: the same text as the regex it replaces
 * (which tried again from every character of a run not ending in "?", quadratic in a long turn).
 */
describe('withoutQuestions', () => {
  it('gives what replace(/[^.!?\\n]*\\?+/g, " ") gives, on every shape of text', () => {
    const rnd = mulberry32(7);
    const alphabet = ['a', 'b', ' ', '.', '!', '?', '?', '\n', 'é', '🙂'];
    for (let n = 0; n < 5000; n++) {
      const text = Array.from({ length: Math.floor(rnd() * 24) }, () => alphabet[Math.floor(rnd() * alphabet.length)]!).join('');
      assert.equal(withoutQuestions(text), text.replace(/[^.!?\n]*\?+/g, ' '), JSON.stringify(text));
    }
    assert.equal(withoutQuestions('Wow, nice! What breed is it?? It is a beagle.'), 'Wow, nice!  It is a beagle.');
  });

  it('reads a 30,000-character turn with one question and no full stop', () => {
    const rest = Array.from({ length: 4000 }, (_, i) => `word${i.toString(36)}`).join(' ');
    const turn = `Is it? ${rest}`;
    assert.ok(turn.length > 30_000 && withoutQuestions(turn) === `  ${rest}`);
    assert.equal(asksOnly(turn), false);
  });
});
