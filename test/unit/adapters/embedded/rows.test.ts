import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toBlob, toFloat32 } from '../../../../src/adapters/embedded/rows.js';

describe('vector blobs', () => {
  it('round-trip float32, also from a blob that is not 4-byte aligned', () => {
    const v = Float32Array.from([0.5, -1.25, 3e-8, 42]);
    assert.deepEqual(toFloat32(toBlob(v)), v);
    const shifted = Buffer.alloc(17);
    toBlob(v).copy(shifted, 1);
    assert.deepEqual(toFloat32(shifted.subarray(1)), v);
  });
});
