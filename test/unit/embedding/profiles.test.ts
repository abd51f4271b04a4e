import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PLAIN_PROFILE, prefixed, profileFor, profileTag } from '../../../src/domain/embedding-profile.js';

describe('the known-model table', () => {
  const cases: Array<[string, string, string, string]> = [
    // model, pooling, query prefix, document prefix
    ['Xenova/all-MiniLM-L6-v2', 'mean', '', ''],
    ['Xenova/bge-small-en-v1.5', 'cls', 'Represent this sentence for searching relevant passages: ', ''],
    ['BAAI/bge-base-en-v1.5', 'cls', 'Represent this sentence for searching relevant passages: ', ''],
    ['Xenova/bge-m3', 'cls', '', ''],
    ['Xenova/e5-small-v2', 'mean', 'query: ', 'passage: '],
    ['Xenova/multilingual-e5-small', 'mean', 'query: ', 'passage: '],
    ['nomic-embed-text:latest', 'mean', 'search_query: ', 'search_document: '],
    ['nomic-ai/nomic-embed-text-v1.5', 'mean', 'search_query: ', 'search_document: '],
    ['mxbai-embed-large', 'cls', 'Represent this sentence for searching relevant passages: ', ''],
    ['text-embedding-3-small', 'mean', '', ''],
  ];
  for (const [model, pooling, q, d] of cases) {
    it(`reads ${model} with ${pooling} pooling and prefixes ${JSON.stringify(q)} / ${JSON.stringify(d)}`, () => {
      assert.deepEqual(profileFor(model), { pooling, normalize: true, query_prefix: q, document_prefix: d });
    });
  }

  it('lets config override each field, an empty prefix included', () => {
    const p = profileFor('Xenova/e5-small-v2', { embedding_pooling: 'cls', embedding_normalize: false, embedding_query_prefix: '', embedding_document_prefix: 'doc: ' });
    assert.deepEqual(p, { pooling: 'cls', normalize: false, query_prefix: '', document_prefix: 'doc: ' });
  });

  it('prefixes texts by purpose', () => {
    const p = profileFor('intfloat/e5-base-v2');
    assert.deepEqual(prefixed(p, ['a', 'b'], 'query'), ['query: a', 'query: b']);
    assert.deepEqual(prefixed(p, ['a'], 'document'), ['passage: a']);
    assert.deepEqual(prefixed(PLAIN_PROFILE, ['a'], 'query'), ['a']);
  });

  it('tags an id only when the reading is not the plain one, and tags two readings apart', () => {
    assert.equal(profileTag(profileFor('Xenova/all-MiniLM-L6-v2'), true), '');
    const bge = profileTag(profileFor('Xenova/bge-small-en-v1.5'), true);
    const e5 = profileTag(profileFor('Xenova/e5-small-v2'), true);
    assert.match(bge, /^\+p[0-9a-f]{8}$/);
    assert.notEqual(bge, e5);
    // a server pools for itself: CLS alone does not change what this process sends or gets
    assert.equal(profileTag({ ...PLAIN_PROFILE, pooling: 'cls' }, false), '');
    assert.notEqual(profileTag({ ...PLAIN_PROFILE, pooling: 'cls' }, true), '');
  });
});
