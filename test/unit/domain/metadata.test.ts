import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StorableMetadataSchema, turnInputSchema } from '../../../src/domain/turn.js';

const input = turnInputSchema(1000);
const issuesOf = (metadata: unknown) => {
  const r = input.safeParse({ session_id: 's', role: 'user', content: 'x', metadata });
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
};

describe('metadata every store can hold', () => {
  it('refuses U+0000 and unpaired surrogates in keys and strings at any depth, naming where', () => {
    assert.deepEqual(issuesOf({ a: { b: ['ok', 'x\u0000y'] } }).map((i) => i.path), ['metadata.a.b.1']);
    assert.deepEqual(issuesOf({ ['k\u0000']: 1 }).map((i) => i.path), ['metadata.k\u0000']);
    assert.deepEqual(issuesOf({ s: '\udc00 alone' }).map((i) => i.path), ['metadata.s']);
    assert.match(issuesOf({ s: '\ud800' })[0]!.message, /U\+0000 or an unpaired UTF-16 surrogate/);
    assert.deepEqual(issuesOf({ fine: 'tab\t, bell \u0007, 😀, "quotes" \\' }), []);
  });

  it('walks deep metadata without recursion, in linear time', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const r = StorableMetadataSchema.safeParse({ deep });
    assert.equal(r.success, false);
    assert.equal(r.error!.issues[0]!.path.length, 200_001);
  });
});
