import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Arena } from '../../../../src/adapters/embedded/arena.js';
import { quantizeInto, strideFor, cosine } from '../../../../src/adapters/embedded/quantize.js';
import { sleb, uleb } from '../../../../src/adapters/embedded/wasm.js';
import { clustered, rng } from './data.js';

describe('wasm encoding', () => {
  it('writes LEB128 as the spec does', () => {
    assert.deepEqual(uleb(0), [0]);
    assert.deepEqual(uleb(127), [0x7f]);
    assert.deepEqual(uleb(128), [0x80, 0x01]);
    assert.deepEqual(uleb(624485), [0xe5, 0x8e, 0x26]);
    assert.deepEqual(sleb(-1), [0x7f]);
    assert.deepEqual(sleb(63), [0x3f]);
    assert.deepEqual(sleb(64), [0xc0, 0x00]);
    assert.deepEqual(sleb(-123456), [0xc0, 0xbb, 0x78]);
  });
});

describe('dotI8 kernel', () => {
  for (const dim of [8, 20, 384]) {
    it(`matches a plain integer dot product (${dim} dimensions, padded rows)`, () => {
      const stride = strideFor(dim);
      const n = 300;
      const r = rng(dim);
      const arena = new Arena();
      const base = arena.alloc(n * stride);
      const q16 = arena.alloc(stride * 2);
      const out = arena.alloc(n * 4);
      const rows: number[][] = [];
      for (let i = 0; i < n; i++) {
        const row = Array.from({ length: dim }, () => Math.floor(r() * 255) - 127);
        rows.push(row);
        arena.i8.set(row, base + i * stride);
        arena.i8.fill(0, base + i * stride + dim, base + (i + 1) * stride);
      }
      const q = Array.from({ length: dim }, () => Math.floor(r() * 255) - 127);
      arena.i16.fill(0, q16 / 2, q16 / 2 + stride);
      arena.i16.set(q, q16 / 2);
      arena.kernels.dotI8(q16, base, n, stride, out);
      for (let i = 0; i < n; i++) {
        const want = rows[i]!.reduce((s, x, j) => s + x * q[j]!, 0);
        assert.equal(arena.i32[out / 4 + i], want, `row ${i}`);
      }
    });
  }
});

describe('scanTop kernel', () => {
  for (const [dim, n] of [[8, 3], [20, 301], [384, 1000]] as const) {
    it(`returns exactly the rows whose scaled dot beats the floor, with their float32 scores (${dim} dimensions, ${n} rows)`, () => {
      const stride = strideFor(dim);
      const r = rng(dim + n);
      const arena = new Arena();
      const base = arena.alloc(n * stride);
      const scales = arena.alloc(Math.ceil((n * 4) / 16) * 16);
      const q16 = arena.alloc(stride * 2);
      const out = arena.alloc(n * 8);
      const rows: number[][] = [];
      for (let i = 0; i < n; i++) {
        const row = Array.from({ length: dim }, () => Math.floor(r() * 255) - 127);
        rows.push(row);
        arena.i8.set(row, base + i * stride);
        arena.i8.fill(0, base + i * stride + dim, base + (i + 1) * stride);
        arena.f32[scales / 4 + i] = r() * 2;
      }
      const q = Array.from({ length: dim }, () => Math.floor(r() * 255) - 127);
      arena.i16.fill(0, q16 / 2, q16 / 2 + stride);
      arena.i16.set(q, q16 / 2);
      const score = (i: number) => Math.fround(Math.fround(rows[i]!.reduce((s, x, j) => s + x * q[j]!, 0)) * arena.f32[scales / 4 + i]!);
      const all = Array.from({ length: n }, (_, i) => score(i));
      const floor = [...all].sort((a, b) => b - a)[Math.min(n - 1, 10)]!;
      // every third row, and the first, left out by the mask (a byte a row; any non-zero byte keeps it)
      const mask = arena.alloc(Math.ceil(n / 16) * 16);
      for (let i = 0; i < n; i++) arena.u8[mask + i] = i % 3 === 0 ? 0 : 1 + (i % 200);
      const read = (found: number) => Array.from({ length: found }, (_, c) => [arena.i32[out / 4 + 2 * c]!, arena.f32[out / 4 + 2 * c + 1]!]);
      for (const f of [-Infinity, floor]) {
        const want = all.flatMap((s, i) => (s > f ? [[i, s]] : []));
        assert.deepEqual(read(arena.kernels.scanTop(q16, base, scales, n, stride, f, out)), want);
        assert.deepEqual(read(arena.kernels.scanTopMasked(q16, base, scales, mask, n, stride, f, out)), want.filter(([i]) => i! % 3 !== 0), 'masked');
      }
    });
  }
});

describe('int8 quantization', () => {
  it('approximates the cosine within 1%', () => {
    const { vectors } = clustered(200, 384, 3);
    const stride = strideFor(384);
    const codes = vectors.map((v) => {
      const c = new Int8Array(stride);
      return { c, scale: quantizeInto(v, c, 0) };
    });
    for (let i = 1; i < vectors.length; i++) {
      let dot = 0;
      for (let j = 0; j < 384; j++) dot += codes[0]!.c[j]! * codes[i]!.c[j]!;
      const approx = dot * codes[0]!.scale * codes[i]!.scale;
      assert.ok(Math.abs(approx - cosine(vectors[0]!, vectors[i]!)) < 0.01, `vector ${i}: ${approx}`);
    }
  });

  it('gives an all-zero vector scale 0 and cosine 0', () => {
    const z = new Float32Array(16);
    assert.equal(quantizeInto(z, new Int8Array(16), 0), 0);
    assert.equal(cosine(z, z), 0);
  });
});

describe('arena', () => {
  it('keeps data across growth and reuses freed blocks', () => {
    const arena = new Arena();
    const a = arena.alloc(1024);
    arena.u8.fill(7, a, a + 1024);
    const big = arena.alloc(4 * 65_536); // forces a grow: views must follow
    assert.equal(arena.u8[a + 1023], 7);
    const c = arena.alloc(1024);
    arena.release(big, 4 * 65_536); // not the last block: kept for reuse
    assert.equal(arena.alloc(4 * 65_536), big);
    arena.release(c, 1024); // the last block: the top comes down
    assert.equal(arena.alloc(2048), c);
  });

  it('grows the last block in place, and only the last', () => {
    const arena = new Arena();
    const a = arena.alloc(1024);
    arena.u8.fill(5, a, a + 1024);
    assert.equal(arena.extend(a, 1024, 8 * 65_536), true);
    assert.equal(arena.u8[a + 1023], 5);
    const b = arena.alloc(64);
    assert.equal(arena.extend(a, 8 * 65_536, 9 * 65_536), false);
    assert.ok(b >= a + 8 * 65_536);
  });
});
