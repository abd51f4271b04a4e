import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { MAX_QUERY_TERMS, ftsMatchExpression, heldStems, holdsStems, queryTerms, sentenceCount, stem, stems } from '../../../src/retrieval/query-terms.js';

describe('queryTerms', () => {
  it('keeps the distinct content words, lower-cased, in first-seen order', () => {
    assert.deepEqual(queryTerms('What is the name of my Dog? my DOG!'), ['name', 'dog']);
    assert.deepEqual(queryTerms("Remind me what Priya's new job is these days"), ['priya', 'new', 'job', 'days']);
  });

  it('drops question framing that carries no retrieval signal', () => {
    assert.deepEqual(queryTerms('do you remember what I got up to, tell me now'), []);
  });

  it('caps the number of terms', () => {
    const many = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    assert.equal(queryTerms(many).length, MAX_QUERY_TERMS);
    assert.deepEqual(queryTerms(many).slice(-1), [`word${MAX_QUERY_TERMS - 1}`], 'the first ones');
    assert.equal(queryTerms(many, 3).length, 3);
  });
});

describe('sentenceCount', () => {
  it('counts the sentences of a chat message and a question', () => {
    assert.equal(sentenceCount('Hi. I received the list of apartments. What should we do next for the plan?'), 3);
    assert.equal(sentenceCount('Understood. Today is a solid 3.'), 2);
    assert.equal(sentenceCount('What did Caroline research?'), 1);
    assert.equal(sentenceCount('sister job'), 1);
    assert.equal(sentenceCount('wait... what?!'), 2);
    assert.equal(sentenceCount(' ... ?! '), 0);
  });

  it('ends no sentence at a full stop inside a word, after an initial or after a title', () => {
    assert.equal(sentenceCount('Would Caroline likely have Dr. Seuss books on her bookshelf?'), 1);
    assert.equal(sentenceCount('What areas of the U.S. has John been to?'), 1);
    assert.equal(sentenceCount('It costs 3.5 dollars, e.g. a coffee, says J. Smith'), 1);
  });

  it('reads a long text in one pass', () => {
    assert.equal(sentenceCount('a.'.repeat(16_000)), 1);
    assert.equal(sentenceCount('word. '.repeat(5_000)), 5_000);
  });
});

describe('stem', () => {
  it('gives inflections of one word the same stem', () => {
    assert.equal(stem('reading'), stem('reads'));
    assert.equal(stem('live'), stem('lives'));
    assert.equal(stem('living'), stem('lived'));
    assert.equal(stem('studies'), 'study');
    assert.equal(stem("Priya's"), 'priya');
  });

  it('leaves short words alone', () => {
    assert.equal(stem('is'), 'is');
    assert.equal(stem('bus'), 'bus');
  });

  it('stems() keeps content words only, once each', () => {
    assert.deepEqual(stems('I am reading the books I read'), ['read', 'book']);
  });

  it('heldStems and holdsStems answer as stems() does', () => {
    const texts = ["Maya's books: I read them, she's reading ÉMILE's too", 'is it? ok', '', 'Σίσυφος ΟΔΟΣ naïve café-bar x y', 'the the the of a'];
    const wanted = new Set(stems('book reading emile odos cafe-bar maya'));
    for (const t of texts) {
      assert.deepEqual(heldStems(t, wanted), [...wanted].filter((w) => stems(t).includes(w)), t);
      for (let n = 0; n <= 6; n++) assert.equal(holdsStems(t, n), stems(t).length >= n, `${t} ${n}`);
    }
  });
});

describe('ftsMatchExpression against a real FTS5 table', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(content, name, tokenize='porter unicode61 remove_diacritics 2')`);
  const insert = db.prepare('INSERT INTO t (content, name) VALUES (?, ?)');
  insert.run('My dog is called Rex and NEAR the river OR the park', 'Dolores');
  insert.run('I drive a blue Mazda', 'Maya');
  insert.run('* wildcards - minus "quotes" (parens) col:on ^caret', 'x');
  const search = (q: string) => {
    const match = ftsMatchExpression(q);
    if (!match) return [];
    return db.prepare('SELECT content FROM t WHERE t MATCH ? ORDER BY bm25(t)').all(match) as Array<{ content: string }>;
  };
  after(() => db.close());

  it('never lets user text act as FTS syntax', () => {
    for (const q of ['"', '""', '*', 'NEAR', 'near(dog rex)', 'OR', 'dog OR', 'AND NOT', '-rex', 'dog -rex', 'NEAR/2', '(', ')', 'col:on', 'content:dog', '^dog', 'rex*', '"unbalanced', "it's", 'a - b', '{content}: dog', '+', 'NOT dog']) {
      assert.doesNotThrow(() => search(q), q);
    }
  });

  it('matches the words, not operators: "-rex" finds Rex, "dog OR" finds the dog', () => {
    assert.equal(search('-rex').length, 1);
    assert.equal(search('dog OR')[0]?.content.includes('Rex'), true);
    assert.equal(search('near').length, 1); // the word "NEAR" in the text, not the operator
  });

  it('searches the participant name column', () => {
    assert.equal(search('what did Dolores say')[0]?.content.includes('Rex'), true);
  });

  it('is empty when only stopwords remain', () => {
    assert.equal(ftsMatchExpression('what did I do?'), '');
  });

  it('never throws for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (q) => {
        search(q);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom('"', '*', 'NEAR', 'OR', 'AND', 'NOT', '-', '(', ')', ':', '^', '+', 'dog', 'rex', "'", '/2', ' '), { maxLength: 12 }), (parts) => {
        search(parts.join(''));
        search(parts.join(' '));
      }),
      { numRuns: 500 },
    );
  });
});
