import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asksAboutSelf, holdersOf, sameHolder } from '../../../src/retrieval/subject.js';

describe('holdersOf', () => {
  it('names relations, names and the speaker; a name is the speaker only in the speaker\'s own statement, however often the text is asked', () => {
    const text = 'Yesterday Ana said my sister moved to Porto';
    const byAna = holdersOf(text, 'Ana');
    const byBob = holdersOf(text, 'Bob');
    // asked again after another speaker: the text's facts are kept, the speaker's reading is not
    const byAnaAgain = holdersOf(text, 'Ana Lima');
    assert.ok(byBob.has('ana') && byBob.has('porto') && byBob.has('sister'), `Bob tells of Ana, Porto and his sister: ${[...byBob]}`);
    assert.ok(!byAna.has('ana') && byAna.has('sister') && byAna.has('porto'), `Ana's own name is herself: ${[...byAna]}`);
    assert.equal(byAna.size, 3, 'herself, her sister and Porto');
    assert.equal(byBob.size, 3, 'Ana, his sister and Porto ("my sister" is the sister\'s, not his)');
    assert.deepEqual([...byAnaAgain].sort(), [...byAna].sort());
    assert.ok(sameHolder(byAna, holdersOf('I moved to Lisbon', 'Ana')), 'both about the speaker');
    assert.equal(asksAboutSelf('what is my job?'), true);
    assert.equal(asksAboutSelf("what is my sister's job?"), false);
  });
});
