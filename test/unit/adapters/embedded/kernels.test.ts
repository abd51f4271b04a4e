import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Arena } from '../../../../src/adapters/embedded/arena.js';
import { ACC_BYTES, blockRowsOf, capacityFor, encodeQuery, queryBytes, readRow, writeRow } from '../../../../src/adapters/embedded/layout.js';
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

describe('row layout', () => {
  it('sizes a small partition as one block and a big one in whole blocks', () => {
    assert.deepEqual([1, 16, 17, 300, 2048, 2049, 5000].map(capacityFor), [16, 16, 32, 512, 2048, 4096, 6144]);
    assert.deepEqual([32, 256, 2048, 4096].map(blockRowsOf), [32, 256, 2048, 2048]);
  });

  it('reads back every row it wrote, in blocks of any size', () => {
    const stride = strideFor(40);
    const r = rng(7);
    for (const [n, sb] of [[5, 16], [600, 512], [1100, 512]] as const) {
      const i8 = new Int8Array(Math.ceil(n / sb) * sb * stride);
      const rows = Array.from({ length: n }, () => Int8Array.from({ length: stride }, () => Math.floor(r() * 255) - 127));
      rows.forEach((row, i) => writeRow(i8, 0, stride, sb, i, row));
      const back = new Int8Array(stride);
      rows.forEach((row, i) => (readRow(i8, 0, stride, sb, i, back), assert.deepEqual(back, row, `row ${i} of ${n}`)));
    }
  });

  it('encodes only the pairs of dimensions a query holds', () => {
    const stride = 32;
    const q = new Int16Array(stride);
    q[3] = -5; // pair 1
    q[20] = 7; // pair 10
    q[21] = 9;
    const arena = new Arena();
    const at = arena.alloc(queryBytes(stride));
    encodeQuery(q, stride, arena.i16, arena.i32, at);
    assert.equal(arena.i32[at / 4], 2);
    assert.deepEqual([...arena.i16.subarray((at + 16) / 2, (at + 32) / 2)], [0, -5, 0, -5, 0, -5, 0, -5]);
    assert.equal(arena.i32[(at + 32) / 4], 1);
    assert.deepEqual([...arena.i16.subarray((at + 48) / 2, (at + 64) / 2)], [7, 9, 7, 9, 7, 9, 7, 9]);
    assert.equal(arena.i32[(at + 64) / 4], 10);
  });

  it('pairs the first half of the held pairs with the second, an odd count padded with a zero pair', () => {
    const stride = 32;
    const q = new Int16Array(stride);
    [2, 9, 21].forEach((d) => (q[d] = d)); // pairs 1, 4 and 10 of 16
    const arena = new Arena();
    const at = arena.alloc(queryBytes(stride));
    encodeQuery(q, stride, arena.i16, arena.i32, at);
    const slots = Array.from({ length: arena.i32[at / 4]! }, (_, i) => {
      const e = at + 16 + 32 * i;
      return [arena.i32[e / 4 + 4], ...arena.i16.subarray(e / 2, e / 2 + 8)];
    });
    assert.deepEqual(slots, [
      [1, 2, 0, 2, 0, 2, 0, 2, 0],
      [10, 0, 21, 0, 21, 0, 21, 0, 21],
      [4, 0, 9, 0, 9, 0, 9, 0, 9],
      [10, 0, 0, 0, 0, 0, 0, 0, 0],
    ]);
  });

  it('encodes every pair of a query holding most of them, the zero ones as zeros', () => {
    const stride = 16;
    const q = new Int16Array(stride);
    [0, 2, 5, 7, 9].forEach((d) => (q[d] = d + 1)); // pairs 0 to 4 of 8
    const arena = new Arena();
    const at = arena.alloc(queryBytes(stride));
    encodeQuery(q, stride, arena.i16, arena.i32, at);
    assert.equal(arena.i32[at / 4], 8);
    [0, 4, 1, 5, 2, 6, 3, 7].forEach((p, i) => {
      const e = at + 16 + 32 * i;
      assert.deepEqual([...arena.i16.subarray(e / 2, e / 2 + 2)], [q[2 * p], q[2 * p + 1]], `pair ${p}`);
      assert.equal(arena.i32[e / 4 + 4], p);
    });
  });
});

describe('scanTop kernel', () => {
  // one block of 16 rows with 3 held; one block of 512 with 301; two blocks, the second partial; a
  // query holding a few dimensions (the `hash` embedder's questions), one holding about half its
  // pairs, one holding three quarters (encoded whole, zero pairs included); one holding none
  const cases = [
    { dim: 8, n: 3, held: 1 },
    { dim: 20, n: 301, held: 1 },
    { dim: 384, n: 3000, held: 1 },
    { dim: 384, n: 3000, held: 0.08 },
    { dim: 384, n: 3000, held: 0.3 },
    { dim: 384, n: 3000, held: 0.5 },
    { dim: 64, n: 40, held: 0 },
  ];
  for (const { dim, n, held } of cases) {
    it(`returns exactly the rows whose scaled dot beats the floor, with their float32 scores (${dim} dimensions, ${n} rows, ${held * 100}% of the query's held)`, () => {
      const stride = strideFor(dim);
      const r = rng(dim + n + held);
      const arena = new Arena();
      const cap = capacityFor(n);
      const sb = blockRowsOf(cap);
      const base = arena.alloc(cap * stride);
      const scales = arena.alloc(cap * 4);
      const query = arena.alloc(queryBytes(stride));
      const out = arena.alloc(n * 8);
      const acc = arena.alloc(ACC_BYTES);
      const rows: number[][] = [];
      for (let i = 0; i < n; i++) {
        const row = Array.from({ length: dim }, () => Math.floor(r() * 255) - 127);
        rows.push(row);
        const codes = new Int8Array(stride);
        codes.set(row);
        writeRow(arena.i8, base, stride, sb, i, codes);
        arena.f32[scales / 4 + i] = r() * 2;
      }
      const q = Array.from({ length: dim }, () => (r() < held ? Math.floor(r() * 255) - 127 : 0));
      encodeQuery(q, stride, arena.i16, arena.i32, query);
      const score = (i: number) => Math.fround(Math.fround(rows[i]!.reduce((s, x, j) => s + x * q[j]!, 0)) * arena.f32[scales / 4 + i]!);
      const all = Array.from({ length: n }, (_, i) => score(i));
      const floor = [...all].sort((a, b) => b - a)[Math.min(n - 1, 10)]!;
      // every third row, and the first, left out by the mask (a byte a row; any non-zero byte keeps
      // it), and every row of the second block (skipped unread)
      const mask = arena.alloc(Math.ceil(n / 16) * 16 + 16);
      for (let i = 0; i < n; i++) arena.u8[mask + i] = i % 3 === 0 || i >= sb ? 0 : 1 + (i % 200);
      const read = (found: number) => Array.from({ length: found }, (_, c) => [arena.i32[out / 4 + 2 * c]!, arena.f32[out / 4 + 2 * c + 1]!]);
      for (const f of [-Infinity, floor]) {
        const want = all.flatMap((s, i) => (s > f ? [[i, s]] : []));
        assert.deepEqual(read(arena.kernels.scanTop(query, base, scales, n, stride, sb, f, out, acc)), want);
        assert.deepEqual(read(arena.kernels.scanTopMasked(query, base, scales, mask, n, stride, sb, f, out, acc)), want.filter(([i]) => i! % 3 !== 0 && i! < sb), 'masked');
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
