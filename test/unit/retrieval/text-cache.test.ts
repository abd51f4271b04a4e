import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TEXT_CACHE_CHARS, factOf, textCacheSize, type TextFact } from '../../../src/retrieval/text-cache.js';

function counted<T>(name: string, compute: (text: string) => T): TextFact<T> & { calls: number } {
  const fact = { name, calls: 0, compute: (text: string) => (fact.calls++, compute(text)) };
  return fact;
}

describe('factOf', () => {
  it('computes a fact once per text, for a copy of the text read afresh too', () => {
    const length = counted(`length ${Math.random()}`, (t) => t.length);
    const text = `a long reply ${'about the harbour ferry '.repeat(2_000)}`;
    assert.equal(factOf(text, length), text.length);
    assert.equal(factOf(text, length), text.length);
    // a string built anew, as a row read from the store is: equal content, another object
    assert.equal(factOf([...text].join(''), length), text.length);
    assert.equal(length.calls, 1);
    assert.equal(factOf(`${text}!`, length), text.length + 1);
    assert.equal(length.calls, 2);
  });

  it('keeps a fact computed from another fact of the same text beside it', () => {
    const base = counted(`words ${Math.random()}`, (t) => t.split(' '));
    const derived = counted(`word set ${Math.random()}`, (t) => new Set(factOf(t, base)));
    const text = `derived ${Math.random()} from another`;
    factOf(text, derived);
    factOf(text, derived);
    factOf(text, base);
    assert.deepEqual([base.calls, derived.calls], [1, 1]);
  });

  it('keeps the text once for all its facts', () => {
    const text = `kept once ${Math.random()} ${'x'.repeat(10_000)}`;
    const before = textCacheSize();
    for (let i = 0; i < 3; i++) factOf(text, counted(`fact ${i} ${Math.random()}`, () => i));
    const after = textCacheSize();
    // a clear in between would leave less; none is due with this little kept
    assert.equal(after.texts - before.texts, 1);
    assert.equal(after.chars - before.chars, text.length);
  });

  it('keeps no text longer than the bound, and drops everything when the bound would be passed', () => {
    const huge = 'y'.repeat(TEXT_CACHE_CHARS + 1);
    const f = counted(`huge ${Math.random()}`, () => 1);
    factOf(huge, f);
    factOf(huge, f);
    assert.equal(f.calls, 2);
    const small = counted(`small ${Math.random()}`, () => 1);
    factOf('a text kept before the big one', small);
    const big = 'z'.repeat(TEXT_CACHE_CHARS - 10);
    factOf(big, counted(`big ${Math.random()}`, () => 1));
    assert.deepEqual(textCacheSize(), { texts: 1, chars: big.length });
    factOf('a text kept before the big one', small);
    assert.equal(small.calls, 2);
  });
});
