import { assemble, F32, I32, op, V128, type FuncDef } from './wasm.js';

/*
 * The scan kernel of the embedded index, in WebAssembly with 128-bit SIMD. Rows are stored in blocks
 * (layout.ts): within a block of `sb` rows, each pair of dimensions is one run of 2·sb bytes, the
 * pair's two codes for every row of the block. The kernel reads the query's pairs one after another,
 * each run from start to end, so a query reads only the runs of the pairs it holds: the `hash`
 * embedder's queries hold a word's few features (a question 30 of 384 dimensions, a chat message 100),
 * and a scan of rows stored whole read every byte of every row. `i32x4.dot_i16x8_s` over 8 bytes of a
 * run (4 rows × 2 dimensions, widened as they load) and the query's pair repeated gives 4 rows' sums.
 * Pairs are read two at a time (the query holds an even number, in the order layout.ts gives them), so
 * a row's sum is loaded and stored once for both, and two runs stream at once.
 * All pointers are byte offsets into the kernel's memory.
 */

// scanTop(query, base, scales, n, stride, sb, floor, out, acc) → count: for each of the n rows from
// `base` (the start of a block), score = Σ codes·query · scales[i] (float32); the rows scoring above
// `floor` are written to out as (i32 row, f32 score) pairs, in row order, and counted. A caller that
// raises `floor` to its current k-th best between calls reads back a few hundred candidates instead of
// scoring every row in JS. `query`: the encoded query (layout.ts, encodeQuery); `acc`: 4·sb bytes of
// scratch, a block's sums.
// scanTopMasked(query, base, scales, mask, n, stride, sb, floor, out, acc) → count: the same over the
// rows whose byte at mask + i is not 0 (the rows a retrieval filter allows); a block none of whose rows
// is allowed is skipped unread.
const scanTop = (masked: boolean): FuncDef => {
  const shift = masked ? 1 : 0;
  const [query, base, scales, mask] = [0, 1, 2, 3];
  const [n, stride, sb, floor, out, acc] = [3, 4, 5, 6, 7, 8].map((x) => x + shift) as [number, number, number, number, number, number];
  const [i, p, pairs, e, k, run, j, end, rows, r, cnt, at, s, q, hit, run2, q2] = Array.from({ length: 17 }, (_, x) => 9 + shift + x) as number[] as [
    number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number,
  ];
  const UNROLL = 4;
  // two pairs at a time: a row's sum is loaded and stored once for both, and two runs stream at once
  const sums: number[][] = [];
  for (let u = 0; u < UNROLL; u++) {
    sums.push(
      op.get(j), op.get(j), op.v128Load(u * 16),
      op.get(run), op.v128Load8x8S(u * 8), op.get(q), op.i32x4DotI16x8S, op.i32x4Add,
      op.get(run2), op.v128Load8x8S(u * 8), op.get(q2), op.i32x4DotI16x8S, op.i32x4Add,
      op.v128Store(u * 16),
    );
  }
  // row r + lane of the block: a candidate when its score beats the floor (and its mask byte is set)
  const lane = (l: number): number[][] => [
    op.get(r), op.i32Const(l), op.i32Add, op.get(rows), op.i32LtU, op.if,
    ...(masked ? [op.get(mask), op.get(i), op.i32Add, op.get(r), op.i32Add, op.i32Load8U(l), op.if] : []),
    op.get(acc), op.get(r), op.i32Const(2), op.i32Shl, op.i32Add, op.i32Load(l * 4), op.f32ConvertI32S,
    op.get(scales), op.get(i), op.get(r), op.i32Add, op.i32Const(2), op.i32Shl, op.i32Add, op.f32Load(l * 4), op.f32Mul, op.tee(s),
    op.get(floor), op.f32Gt, op.if,
    op.get(out), op.get(cnt), op.i32Const(3), op.i32Shl, op.i32Add, op.tee(at), op.get(i), op.get(r), op.i32Add, op.i32Const(l), op.i32Add, op.i32Store(0),
    op.get(at), op.get(s), op.f32Store(4),
    op.get(cnt), op.i32Const(1), op.i32Add, op.set(cnt),
    op.end,
    ...(masked ? [op.end] : []),
    op.end,
  ];
  const nextBlock = [
    op.get(p), op.get(stride), op.get(sb), op.i32Mul, op.i32Add, op.set(p),
    op.get(i), op.get(sb), op.i32Add, op.set(i),
  ];
  return {
    name: masked ? 'scanTopMasked' : 'scanTop',
    params: masked ? [I32, I32, I32, I32, I32, I32, I32, F32, I32, I32] : [I32, I32, I32, I32, I32, I32, F32, I32, I32],
    results: [I32],
    locals: [I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, F32, V128, V128, I32, V128],
    body: [
      op.get(query), op.i32Load(0), op.set(pairs),
      op.get(base), op.set(p),
      op.block, op.loop,
      op.get(i), op.get(n), op.i32GeU, op.brIf(1),
      // the block's rows: sb, fewer in the last
      op.get(n), op.get(i), op.i32Sub, op.set(rows),
      op.get(sb), op.get(rows), op.i32LtU, op.if, op.get(sb), op.set(rows), op.end,
      // sums are kept for the rows rounded up to 4·UNROLL (the runs are padded to a block's sb rows)
      op.get(acc), op.get(rows), op.i32Const(4 * UNROLL - 1), op.i32Add, op.i32Const(-4 * UNROLL), op.i32And, op.i32Const(2), op.i32Shl, op.i32Add, op.set(end),
      ...(masked
        ? [
            // a block whose rows are all left out: the next one (br 1 from inside the `if` is the loop)
            op.v128Zero, op.set(hit),
            op.get(mask), op.get(i), op.i32Add, op.set(j),
            op.get(j), op.get(rows), op.i32Add, op.set(k),
            op.block, op.loop,
            op.get(j), op.get(k), op.i32GeU, op.brIf(1),
            op.get(hit), op.get(j), op.v128Load(0), op.v128Or, op.set(hit),
            op.get(j), op.i32Const(16), op.i32Add, op.set(j),
            op.br(0),
            op.end, op.end,
            op.get(hit), op.v128AnyTrue, op.i32Eqz, op.if, ...nextBlock, op.br(1), op.end,
          ]
        : []),
      op.get(acc), op.set(j),
      op.block, op.loop,
      op.get(j), op.get(end), op.i32GeU, op.brIf(1),
      op.get(j), op.v128Zero, op.v128Store(0),
      op.get(j), op.i32Const(16), op.i32Add, op.set(j),
      op.br(0),
      op.end, op.end,
      // each pair of the query: its run in this block, every row
      op.get(query), op.i32Const(16), op.i32Add, op.set(e),
      op.i32Const(0), op.set(k),
      op.block, op.loop,
      op.get(k), op.get(pairs), op.i32GeU, op.brIf(1),
      op.get(e), op.v128Load(0), op.set(q),
      op.get(e), op.v128Load(32), op.set(q2),
      op.get(p), op.get(e), op.i32Load(16), op.get(sb), op.i32Mul, op.i32Const(1), op.i32Shl, op.i32Add, op.set(run),
      op.get(p), op.get(e), op.i32Load(48), op.get(sb), op.i32Mul, op.i32Const(1), op.i32Shl, op.i32Add, op.set(run2),
      op.get(acc), op.set(j),
      op.block, op.loop,
      op.get(j), op.get(end), op.i32GeU, op.brIf(1),
      ...sums,
      op.get(j), op.i32Const(16 * UNROLL), op.i32Add, op.set(j),
      op.get(run), op.i32Const(8 * UNROLL), op.i32Add, op.set(run),
      op.get(run2), op.i32Const(8 * UNROLL), op.i32Add, op.set(run2),
      op.br(0),
      op.end, op.end,
      op.get(e), op.i32Const(64), op.i32Add, op.set(e),
      op.get(k), op.i32Const(2), op.i32Add, op.set(k),
      op.br(0),
      op.end, op.end,
      // four rows at a time: any of them above the floor? then each
      op.i32Const(0), op.set(r),
      op.block, op.loop,
      op.get(r), op.get(rows), op.i32GeU, op.brIf(1),
      op.get(acc), op.get(r), op.i32Const(2), op.i32Shl, op.i32Add, op.v128Load(0), op.f32x4ConvertI32x4S,
      op.get(scales), op.get(i), op.get(r), op.i32Add, op.i32Const(2), op.i32Shl, op.i32Add, op.v128Load(0), op.f32x4Mul,
      op.get(floor), op.f32x4Splat, op.f32x4Gt, op.v128AnyTrue, op.if,
      ...lane(0), ...lane(1), ...lane(2), ...lane(3),
      op.end,
      op.get(r), op.i32Const(4), op.i32Add, op.set(r),
      op.br(0),
      op.end, op.end,
      ...nextBlock,
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

const MODULE = new Wasm.Module(assemble([SCAN_TOP, SCAN_TOP_MASKED], { sharedMaxPages: MAX_PAGES }));

export interface KernelFns {
  scanTop(query: number, base: number, scales: number, n: number, stride: number, sb: number, floor: number, out: number, acc: number): number;
  scanTopMasked(query: number, base: number, scales: number, mask: number, n: number, stride: number, sb: number, floor: number, out: number, acc: number): number;
}

/** A memory for the kernels: `pages` of 64 KiB, growable, shared (a SharedArrayBuffer under it). */
export function createMemory(pages: number): WasmMemory {
  return new Wasm.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
}

/** The kernels bound to one memory (each arena owns one). */
export function instantiateKernels(memory: WasmMemory): KernelFns {
  return new Wasm.Instance(MODULE, { env: { memory } }).exports as KernelFns;
}

