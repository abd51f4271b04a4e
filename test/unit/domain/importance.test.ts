import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scoreImportance } from '../../../src/domain/importance.js';

const THRESHOLD = 0.3; // the default importance_threshold

describe('scoreImportance', () => {
  it('scores greetings, thanks and sign-offs near zero, with or without a name', () => {
    for (const t of ['ok thanks', 'thanks, that is all for now', 'ok bye!', 'gotta run, thanks', 'great, thank you', 'hey Nova', 'evening Nova, quick one', 'night!', 'perfect, talk later', '👍', '😄']) {
      assert.ok(scoreImportance(t, 'user') < THRESHOLD, t);
    }
    assert.ok(scoreImportance('Anytime, take care!', 'assistant') < THRESHOLD);
  });

  it('keeps a short user answer: it usually answers the question before it', () => {
    for (const t of ['casa verde', 'nine', 'dr okafor', 'Ironworks.', 'EU 42', 'a guy called Dev']) {
      assert.ok(scoreImportance(t, 'user') >= THRESHOLD, t);
    }
  });

  it('keeps what the user says about themselves, above plain statements', () => {
    const fact = scoreImportance("I'm allergic to peanuts, I carry an EpiPen.", 'user');
    const plain = scoreImportance('the weather is finally nice today', 'user');
    assert.ok(fact >= 0.6);
    assert.ok(fact > plain);
    assert.ok(plain >= THRESHOLD);
  });

  it('scores what the assistant says like what the user says: the same words, the same importance', () => {
    for (const t of [
      'Your appointment with Dr. Okafor is on Friday at 9:30.',
      'The budget comes to about four hundred a month',
      'Tuesday at nine',
      'I recommend the Lex Fridman podcast for the commute.',
      'the weather is finally nice today',
      'Noted!',
      'ok thanks',
    ]) {
      assert.equal(scoreImportance(t, 'assistant'), scoreImportance(t, 'user'), t);
    }
    // a short answer is kept whoever gives it; an acknowledgement by either is not
    assert.ok(scoreImportance('Tuesday at nine', 'assistant') >= THRESHOLD);
    assert.ok(scoreImportance('The budget comes to about four hundred a month', 'assistant') >= THRESHOLD);
    assert.ok(scoreImportance('Noted!', 'assistant') < THRESHOLD);
    assert.ok(scoreImportance('Noted!', 'user') < THRESHOLD);
  });

  it('marks down short tool and system turns', () => {
    assert.ok(scoreImportance('ok', 'tool') < THRESHOLD);
    assert.ok(scoreImportance('exit 0', 'tool') < THRESHOLD);
    assert.ok(scoreImportance('done', 'system') < THRESHOLD);
  });

  it('stays in [0, 1]', () => {
    const long = `My birthday is on May 3rd and I love Lisbon. ${'word '.repeat(60)}`;
    for (const role of ['user', 'assistant', 'system', 'tool'] as const) {
      for (const t of [long, 'x', '', '?']) {
        const s = scoreImportance(t, role);
        assert.ok(s >= 0 && s <= 1, `${role} ${s}`);
      }
    }
  });
});
