import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RedisKeys, decodeKeyPart, encodeKeyPart } from '../../../../src/adapters/redis/keys.js';

describe('Redis keys', () => {
  const keys = new RedisKeys('nc');

  it('encodes ids so that any character round-trips and none can break the layout or a SCAN pattern', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (id) => {
        const enc = encodeKeyPart(id);
        assert.equal(decodeKeyPart(enc), id);
        assert.doesNotMatch(enc, /[:*?[\]\\{} ]/);
      }),
    );
  });

  it('keeps users and sessions apart whatever they contain', () => {
    assert.notEqual(keys.session('a:b', 'c'), keys.session('a', 'b:c'));
    assert.notEqual(keys.session('u', '*'), keys.session('u', 'x'));
    assert.equal(keys.session('alice', 's 1'), 'nc:st:s:{alice}:s%201');
    assert.equal(keys.userSessions('bob@x'), 'nc:st:u:{bob%40x}');
    assert.ok(keys.session('ü', 's').startsWith('nc:st:s:'));
    assert.match(keys.session('ü', 's'), /^nc:st:s:\{%C3%BC\}:s$/);
  });

  it('puts the queues and the short-term tier under one prefix, and refuses a prefix that would need encoding', () => {
    assert.equal(new RedisKeys('prod-1').bullPrefix, 'prod-1:bull');
    assert.equal(keys.allSessionsPattern(), 'nc:st:s:*');
    assert.throws(() => new RedisKeys('a:b'), /invalid Redis key prefix/);
    assert.throws(() => new RedisKeys('a*'), /invalid Redis key prefix/);
  });
});
