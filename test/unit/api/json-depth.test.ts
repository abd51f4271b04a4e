import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { exceedsDepth } from '../../../src/api/json-depth.js';

/** nesting depth of a JSON value: a scalar is 0, [] and {} are 1 */
function depth(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depth));
  if (v !== null && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depth));
  return 0;
}

const bytes = (s: string) => Buffer.from(s, 'utf8');

test('the byte scan agrees with the nesting of any JSON value, brackets in strings included', () => {
  const strings = fc.string({ unit: fc.constantFrom('a', '[', ']', '{', '}', '"', '\\', 'é', '😀') });
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, strings, fc.integer(), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(strings, tie('node'), { maxKeys: 3 })),
  })).node;
  fc.assert(
    fc.property(value, fc.integer({ min: 0, max: 6 }), (v, max) => {
      assert.equal(exceedsDepth(bytes(JSON.stringify(v)), max), depth(v) > max);
    }),
    { numRuns: 500 },
  );
});

test('deep texts are refused without parsing them', () => {
  assert.equal(exceedsDepth(bytes('['.repeat(65) + ']'.repeat(65))), true);
  assert.equal(exceedsDepth(bytes('['.repeat(64) + ']'.repeat(64))), false);
  assert.equal(exceedsDepth(bytes(`{"a":"${'['.repeat(1000)}"}`)), false);
  assert.equal(exceedsDepth(bytes('['.repeat(1_000_000))), true); // truncated too: still refused early
});
