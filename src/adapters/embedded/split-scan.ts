import type { KernelFns } from './kernels.js';
import { ACC_BYTES, BLOCK_ROWS } from './layout.js';
import { TopK } from './top-k.js';

/*
 * One int8 scan shared by two threads: the caller's and a helper (scan-thread.ts), both running the
 * kernel over the same shared memory. The partition is cut into chunks that each thread claims one at
 * a time from one atomic counter, so a helper that is busy or slow to wake simply claims fewer (none,
 * on a machine whose other core is taken) and the caller scans the rest: no query waits for a thread
 * that has no core. When the caller runs out of chunks it takes back any chunk the helper claimed and
 * has not finished, and scans it itself; the helper's late answer for it is ignored. So the caller
 * never waits at all, at the cost of scanning at most one chunk twice.
 *
 * The answer is exactly the one-thread scan's: the r best rows by (score, then row order), with the
 * kernel's float32 scores. Every row a thread drops is beaten by r rows that rank above it (its own
 * k-th best so far, from rows before it), so no row of the true top r is ever dropped, and the final
 * merge sorts the survivors by (score desc, row asc), the order the one-thread TopK keeps.
 *
 * The control block (an Int32Array over a SharedArrayBuffer; Float32 view for scores) holds the job,
 * the claim counter, each chunk's state and the helper's per-chunk candidates.
 */

/** job sequence number: the caller bumps it and wakes the helper */
export const SEQ = 0;
/** claim counter: (gen << CHUNK_BITS) | next chunk */
const CLAIM = 1;
/** which memory the job's offsets are in (the helper instantiates the kernels on each new one) */
export const MEMORY = 2;
const QUERY = 3;
const BASE = 4;
const SCALES = 5;
const ROWS = 6;
const STRIDE = 7;
const CHUNK_ROWS = 8;
const CHUNKS = 9;
const R = 10;
const OUT = 11;
/** 1 once the helper waits for jobs */
export const STATUS = 12;
const SB = 13;
/** per chunk: (gen << 2) | 1 published by the helper, | 2 taken back by the caller */
const STATE = 16;
export const MAX_CHUNKS = 1024;
/** per chunk: where its candidates start in LIST, and how many */
const META = STATE + MAX_CHUNKS;
const LIST = META + 2 * MAX_CHUNKS;
/**
 * the most candidates a search asks for that a split scan serves (more: one thread); a filtered
 * search's probe of the unfiltered ranking asks for 256
 */
export const MAX_R = 256;
const LIST_ENTRIES = MAX_CHUNKS * MAX_R;
export const CONTROL_BYTES = (LIST + 2 * LIST_ENTRIES) * 4;

const CHUNK_BITS = 12;
const GEN_MASK = 0x7ffff;
const PUBLISHED = 1;
const TAKEN = 2;
/** rows per kernel call: the kernel writes up to this many (row, score) pairs to `out` */
export const CALL_ROWS = 2 * BLOCK_ROWS;
export const OUT_BYTES = CALL_ROWS * 8;
/** a thread's scratch: its kernel output, then a block's sums */
export const SCRATCH_BYTES = OUT_BYTES + ACC_BYTES;
/** rows per kernel call while a thread's top r is not full yet (every row it sees is a candidate) */
const FIRST_CALL_ROWS = BLOCK_ROWS;

export interface ScanJob {
  /** the encoded query (layout.ts) */
  query: number;
  base: number;
  scales: number;
  rows: number;
  stride: number;
  /** rows of a block (layout.ts): chunks start at a block */
  sb: number;
  r: number;
}

/**
 * Scans rows [from, from + count) of the job into `top` (and `also`, when given), the kernel's floor
 * being `top`'s k-th best or `bound`, whichever is higher. Each kernel call's candidates land at
 * `out`, a block's sums after them (a thread's SCRATCH_BYTES).
 */
function scanRows(k: KernelFns, i32: Int32Array, f32: Float32Array, job: ScanJob, out: number, from: number, count: number, top: TopK, bound: number, also?: TopK): void {
  const end = from + count;
  for (let at = from; at < end; ) {
    const n = Math.min(top.size < top.k ? FIRST_CALL_ROWS : CALL_ROWS, end - at);
    const floor = Math.max(top.floor, bound);
    const found = k.scanTop(job.query, job.base + at * job.stride, job.scales + at * 4, n, job.stride, job.sb, floor, out, out + OUT_BYTES);
    for (let c = 0, p = out >> 2; c < found; c++, p += 2) {
      const row = at + i32[p]!;
      const score = f32[p + 1]!;
      top.push(row, score);
      also?.push(row, score);
    }
    at += n;
  }
}

/** Scans chunk `c` of the job (`chunkRows` rows, fewer in the last one): scanRows over its rows. */
function scanChunk(k: KernelFns, i32: Int32Array, f32: Float32Array, job: ScanJob, out: number, c: number, chunkRows: number, top: TopK, bound: number, also?: TopK): void {
  scanRows(k, i32, f32, job, out, c * chunkRows, Math.min(chunkRows, job.rows - c * chunkRows), top, bound, also);
}

/** the largest float32 below `f` (a floor under which a row cannot tie `f`); -Infinity stays */
function below(f: number): number {
  if (!Number.isFinite(f)) return f;
  if (f === 0) return -1.401298464324817e-45; // the smallest subnormal, negated
  const b = new Float32Array([f]);
  const u = new Int32Array(b.buffer);
  u[0]! += f > 0 ? -1 : 1;
  return b[0]!;
}

/** Chunk size for `rows` rows: CALL_ROWS, larger (whole blocks) when that would make more than MAX_CHUNKS. */
export function chunkRowsFor(rows: number): number {
  return Math.max(CALL_ROWS, Math.ceil(rows / MAX_CHUNKS / BLOCK_ROWS) * BLOCK_ROWS);
}

/** the generation of job `seq` (what claims and chunk states carry) */
export function genOf(seq: number): number {
  return seq & GEN_MASK;
}

/** The claim word's next chunk for `gen`, or -1 when none is left (or the job is no longer `gen`). */
export function claim(ctrl: Int32Array, gen: number, chunks: number): number {
  for (;;) {
    const v = Atomics.load(ctrl, CLAIM);
    if (v >>> CHUNK_BITS !== gen) return -1;
    const c = v & ((1 << CHUNK_BITS) - 1);
    if (c >= chunks) return -1;
    if (Atomics.compareExchange(ctrl, CLAIM, v, v + 1) === v) return c;
  }
}

/**
 * The caller's side: writes the job, wakes the helper (`wake`), scans the chunks it claims, takes back
 * the helper's unfinished ones and merges. Returns the r best rows (slots), best first, and how many
 * chunks the helper's answers covered.
 */
export function splitScan(
  k: KernelFns, i32: Int32Array, f32: Float32Array, ctrl: Int32Array, memoryId: number, job: ScanJob, out: number, helperOut: number, wake: () => void,
): { slots: number[]; helped: number } {
  const chunkRows = chunkRowsFor(job.rows);
  const chunks = Math.ceil(job.rows / chunkRows);
  const seq = (Atomics.load(ctrl, SEQ) + 1) | 0;
  const gen = genOf(seq);
  ctrl[MEMORY] = memoryId;
  ctrl[QUERY] = job.query;
  ctrl[BASE] = job.base;
  ctrl[SCALES] = job.scales;
  ctrl[ROWS] = job.rows;
  ctrl[STRIDE] = job.stride;
  ctrl[SB] = job.sb;
  ctrl[CHUNK_ROWS] = chunkRows;
  ctrl[CHUNKS] = chunks;
  ctrl[R] = job.r;
  ctrl[OUT] = helperOut;
  Atomics.store(ctrl, CLAIM, gen << CHUNK_BITS);
  Atomics.store(ctrl, SEQ, seq);
  wake();

  const top = new TopK(job.r);
  const mine = new Uint8Array(chunks);
  for (let c; (c = claim(ctrl, gen, chunks)) >= 0; ) {
    mine[c] = 1;
    scanChunk(k, i32, f32, job, out, c, chunkRows, top, -Infinity);
  }
  // every chunk is claimed now; the helper's are published, or taken back here
  const rows: number[] = [];
  const scores: number[] = [];
  const lists = new Float32Array(ctrl.buffer);
  let retaken: TopK | null = null;
  let helped = 0;
  for (let c = 0; c < chunks; c++) {
    if (mine[c]) continue;
    const st = Atomics.load(ctrl, STATE + c);
    if (st === ((gen << 2) | PUBLISHED) || Atomics.compareExchange(ctrl, STATE + c, st, (gen << 2) | TAKEN) !== st) {
      helped++;
      const from = ctrl[META + 2 * c]!;
      const n = ctrl[META + 2 * c + 1]!;
      for (let e = LIST + 2 * from, end = e + 2 * n; e < end; e += 2) (rows.push(ctrl[e]!), scores.push(lists[e + 1]!));
    } else {
      // taken back: rows below this thread's k-th best cannot reach the top r
      retaken ??= new TopK(job.r);
      scanChunk(k, i32, f32, job, out, c, chunkRows, retaken, below(top.floor));
    }
  }
  for (const t of retaken ? [top, retaken] : [top]) for (let i = 0; i < t.size; i++) (rows.push(t.items[i]!), scores.push(t.scores[i]!));
  const order = rows.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || rows[a]! - rows[b]!);
  return { slots: order.slice(0, job.r).map((i) => rows[i]!), helped };
}

/**
 * The helper's side of job `seq` (already read from SEQ): claims chunks until none is left and
 * publishes each one's candidates (its r best among the rows above the helper's running floor).
 */
export function helpScan(k: KernelFns, i32: Int32Array, f32: Float32Array, ctrl: Int32Array, seq: number): void {
  const gen = genOf(seq);
  const job: ScanJob = { query: ctrl[QUERY]!, base: ctrl[BASE]!, scales: ctrl[SCALES]!, rows: ctrl[ROWS]!, stride: ctrl[STRIDE]!, sb: ctrl[SB]!, r: ctrl[R]! };
  const chunkRows = ctrl[CHUNK_ROWS]!;
  const chunks = ctrl[CHUNKS]!;
  const out = ctrl[OUT]!;
  // the job may have been replaced since SEQ was read: claims check the generation
  if (Atomics.load(ctrl, SEQ) !== seq) return;
  const top = new TopK(job.r);
  const lists = new Float32Array(ctrl.buffer);
  let cursor = 0;
  for (let c; (c = claim(ctrl, gen, chunks)) >= 0; ) {
    const st = Atomics.load(ctrl, STATE + c);
    if (st >>> 2 === gen) continue; // taken back already
    const chunk = new TopK(job.r);
    scanChunk(k, i32, f32, job, out, c, chunkRows, top, -Infinity, chunk);
    for (let i = 0; i < chunk.size; i++) {
      const e = LIST + 2 * (cursor + i);
      ctrl[e] = chunk.items[i]!;
      lists[e + 1] = chunk.scores[i]!;
    }
    ctrl[META + 2 * c] = cursor;
    ctrl[META + 2 * c + 1] = chunk.size;
    cursor += chunk.size;
    Atomics.compareExchange(ctrl, STATE + c, st, (gen << 2) | PUBLISHED);
  }
}
