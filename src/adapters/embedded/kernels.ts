import { assemble, F32, I32, op, V128, type FuncDef } from './wasm.js';

/*
 * The scan kernels of the embedded index, in WebAssembly with 128-bit SIMD: a plain JS loop does one
 * multiply-add at a time (~25 ms for 100k × 384 floats on these machines), `i32x4.dot_i16x8_s` does
 * eight. All pointers are byte offsets into the kernel's memory; every row is `stride` bytes long,
 * a multiple of 16.
 */

// dotI8(q16, base, n, stride, out): out[i] = Σ q16[j]·base[i][j] as int32 (no overflow: |Σ| ≤ 127²·dim)
// q16 is the int8 query widened to int16 (2·stride bytes), base holds n int8 rows.
const DOT_I8: FuncDef = (() => {
  const [q16, base, n, stride, out] = [0, 1, 2, 3, 4];
  const [i, p, j, acc, a] = [5, 6, 7, 8, 9];
  return {
    name: 'dotI8',
    params: [I32, I32, I32, I32, I32],
    results: [],
    locals: [I32, I32, I32, V128, V128],
    body: [
      op.get(base), op.set(p),
      op.block, op.loop,
      op.get(i), op.get(n), op.i32GeU, op.brIf(1),
      op.v128Zero, op.set(acc),
      op.i32Const(0), op.set(j),
      op.block, op.loop,
      op.get(j), op.get(stride), op.i32GeU, op.brIf(1),
      op.get(p), op.get(j), op.i32Add, op.v128Load(), op.set(a),
      op.get(acc),
      op.get(a), op.i16x8ExtendLowI8x16S,
      op.get(q16), op.get(j), op.i32Const(1), op.i32Shl, op.i32Add, op.v128Load(0),
      op.i32x4DotI16x8S, op.i32x4Add,
      op.get(a), op.i16x8ExtendHighI8x16S,
      op.get(q16), op.get(j), op.i32Const(1), op.i32Shl, op.i32Add, op.v128Load(16),
      op.i32x4DotI16x8S, op.i32x4Add,
      op.set(acc),
      op.get(j), op.i32Const(16), op.i32Add, op.set(j),
      op.br(0),
      op.end, op.end,
      op.get(out), op.get(i), op.i32Const(2), op.i32Shl, op.i32Add,
      op.get(acc), op.i32x4ExtractLane(0), op.get(acc), op.i32x4ExtractLane(1), op.i32Add,
      op.get(acc), op.i32x4ExtractLane(2), op.i32Add, op.get(acc), op.i32x4ExtractLane(3), op.i32Add,
      op.i32Store(),
      op.get(p), op.get(stride), op.i32Add, op.set(p),
      op.get(i), op.i32Const(1), op.i32Add, op.set(i),
      op.br(0),
      op.end, op.end,
    ],
  };
})();


// scanTop(q16, base, scales, n, stride, floor, out) → count: the int8 scan with the scale and the
// threshold folded in. For each of the n rows, score = dot(q, row) · scales[i] (float32); the rows
// scoring above `floor` are written to out as (i32 row, f32 score) pairs and counted. A caller that
// raises `floor` to its current k-th best between calls reads back a few hundred candidates instead
// of scoring every row in JS (that loop cost as much as the scan). `v128.load8x8_s` widens as it
// loads. (Scoring two to four rows per pass to share the query loads measured no faster here.)
// scanTopMasked(q16, base, scales, mask, n, stride, floor, out) → count: the same over the rows whose
// byte at mask + i is not 0 (the rows a retrieval filter allows); the others are skipped unscored.
const scanTop = (masked: boolean): FuncDef => {
  const [q16, base, scales, mask] = [0, 1, 2, 3];
  const shift = masked ? 1 : 0;
  const [n, stride, floor, out] = [3 + shift, 4 + shift, 5 + shift, 6 + shift];
  const [i, p, j, cnt, s, acc, at] = [7, 8, 9, 10, 11, 12, 13].map((x) => x + shift) as [number, number, number, number, number, number, number];
  const next = [op.get(p), op.get(stride), op.i32Add, op.set(p), op.get(i), op.i32Const(1), op.i32Add, op.set(i)];
  return {
    name: masked ? 'scanTopMasked' : 'scanTop',
    params: masked ? [I32, I32, I32, I32, I32, I32, F32, I32] : [I32, I32, I32, I32, I32, F32, I32],
    results: [I32],
    locals: [I32, I32, I32, I32, F32, V128, I32],
    body: [
      op.get(base), op.set(p),
      op.block, op.loop,
      op.get(i), op.get(n), op.i32GeU, op.brIf(1),
      // a row the mask leaves out: the next one (br 1 from inside the `if` is the loop)
      ...(masked ? [op.get(mask), op.get(i), op.i32Add, op.i32Load8U(0), op.i32Eqz, op.if, ...next, op.br(1), op.end] : []),
      op.v128Zero, op.set(acc),
      op.i32Const(0), op.set(j),
      op.block, op.loop,
      op.get(j), op.get(stride), op.i32GeU, op.brIf(1),
      op.get(acc),
      op.get(p), op.get(j), op.i32Add, op.tee(at), op.v128Load8x8S(0),
      op.get(q16), op.get(j), op.i32Const(1), op.i32Shl, op.i32Add, op.v128Load(0),
      op.i32x4DotI16x8S, op.i32x4Add,
      op.get(at), op.v128Load8x8S(8),
      op.get(q16), op.get(j), op.i32Const(1), op.i32Shl, op.i32Add, op.v128Load(16),
      op.i32x4DotI16x8S, op.i32x4Add,
      op.set(acc),
      op.get(j), op.i32Const(16), op.i32Add, op.set(j),
      op.br(0),
      op.end, op.end,
      op.get(acc), op.i32x4ExtractLane(0), op.get(acc), op.i32x4ExtractLane(1), op.i32Add,
      op.get(acc), op.i32x4ExtractLane(2), op.i32Add, op.get(acc), op.i32x4ExtractLane(3), op.i32Add,
      op.f32ConvertI32S,
      op.get(scales), op.get(i), op.i32Const(2), op.i32Shl, op.i32Add, op.f32Load(0), op.f32Mul, op.tee(s),
      op.get(floor), op.f32Gt, op.if,
      op.get(out), op.get(cnt), op.i32Const(3), op.i32Shl, op.i32Add, op.tee(at), op.get(i), op.i32Store(0),
      op.get(at), op.get(s), op.f32Store(4),
      op.get(cnt), op.i32Const(1), op.i32Add, op.set(cnt),
      op.end,
      ...next,
      op.br(0),
      op.end, op.end,
      op.get(cnt),
    ],
  };
};
const SCAN_TOP = scanTop(false);
const SCAN_TOP_MASKED = scanTop(true);

/** The slice of the WebAssembly JS API used here (Node has it; the project's `lib` does not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBufferLike;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export const WASM_PAGE = 65_536;
/**
 * A kernel memory's most pages: 4 GiB, all a 32-bit memory can address. Shared memories (a second
 * thread scans half of a big partition, see scan-thread.ts) must declare a maximum; V8 reserves
 * address space for it up front, as it does for any 32-bit memory on 64-bit hosts, not memory.
 */
const MAX_PAGES = 65_536;

const MODULE = new Wasm.Module(assemble([DOT_I8, SCAN_TOP, SCAN_TOP_MASKED], { sharedMaxPages: MAX_PAGES }));

export interface KernelFns {
  dotI8(q16: number, base: number, n: number, stride: number, out: number): void;
  scanTop(q16: number, base: number, scales: number, n: number, stride: number, floor: number, out: number): number;
  scanTopMasked(q16: number, base: number, scales: number, mask: number, n: number, stride: number, floor: number, out: number): number;
}

/** A memory for the kernels: `pages` of 64 KiB, growable, shared (a SharedArrayBuffer under it). */
export function createMemory(pages: number): WasmMemory {
  return new Wasm.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
}

/** The kernels bound to one memory (each arena owns one). */
export function instantiateKernels(memory: WasmMemory): KernelFns {
  return new Wasm.Instance(MODULE, { env: { memory } }).exports as KernelFns;
}

