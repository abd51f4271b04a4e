/*
 * How a partition's int8 rows lie in the arena, and how a query is handed to the scan kernel
 * (kernels.ts). Rows are grouped in blocks of `sb` rows (sb·stride bytes each, one after another, so
 * the rows from a block's start are at base + row·stride as if they lay whole). Within a block, each
 * pair of dimensions d = 2p, 2p + 1 is one run of 2·sb bytes: row r's two codes at p·2·sb + 2r. A
 * query holding a few dimensions reads a few runs, each from start to end, instead of every byte of
 * every row.
 *
 * What a scan costs is how it reads memory, not its arithmetic. Runs read in order, every one of a
 * block, stream at the memory's full speed; runs picked here and there are each a jump the hardware
 * prefetcher must find again. Over 100k rows of 384 codes, one thread on these machines, reading one
 * run at a time: every pair 1.9 ms, yet 71 pairs of 512-row blocks (1 KiB runs) 3.5 ms and 140 pairs
 * 4.6. Hence blocks of 2,048 rows (4 KiB runs, a page each), two runs read at once from far apart in
 * the query's list (encodeQuery; two neighbouring runs at once were slower than one), and a query
 * holding half of the pairs or more read whole (its zero pairs add nothing to a sum, so the scores
 * are the same): 71 pairs in 1.1–1.4 ms, every pair in 1.8–2.0 (`node dist/bench/profile-scan.js`).
 */

/** rows of a block once a partition holds that many: a block's sums (4 bytes a row) stay in L1, and a run is a 4 KiB page */
export const BLOCK_ROWS = 2048;
/** scratch for the kernel's sums of a block: 4 bytes a row */
export const ACC_BYTES = 4 * BLOCK_ROWS;
/** the smallest block: the kernel sums 16 rows at a time (a user of one vector holds 16 rows' room) */
const MIN_BLOCK_ROWS = 16;

/** A partition's capacity for `n` rows: a power of two up to BLOCK_ROWS (one block), then whole blocks. */
export function capacityFor(n: number): number {
  if (n > BLOCK_ROWS) return Math.ceil(n / BLOCK_ROWS) * BLOCK_ROWS;
  let cap = MIN_BLOCK_ROWS;
  while (cap < n) cap *= 2;
  return cap;
}

/** The block rows of a partition of capacity `cap` (capacityFor's): all of it, or BLOCK_ROWS. */
export function blockRowsOf(cap: number): number {
  return Math.min(cap, BLOCK_ROWS);
}

/** Writes one row's codes (`codes`, stride bytes) as row `slot` of the rows at `base`. */
export function writeRow(i8: Int8Array, base: number, stride: number, sb: number, slot: number, codes: Int8Array): void {
  copyRow(i8, base, stride, sb, slot, codes, true);
}

/** Reads row `slot` of the rows at `base` into `codes` (stride bytes). */
export function readRow(i8: Int8Array, base: number, stride: number, sb: number, slot: number, codes: Int8Array): void {
  copyRow(i8, base, stride, sb, slot, codes, false);
}

/** row `slot`'s two codes of each pair, from run to run: into the layout (`write`) or out of it */
function copyRow(i8: Int8Array, base: number, stride: number, sb: number, slot: number, codes: Int8Array, write: boolean): void {
  const at = base + Math.floor(slot / sb) * sb * stride + (slot % sb) * 2;
  const [to, from] = write ? [i8, codes] : [codes, i8];
  const [toStep, fromStep] = write ? [2 * sb, 2] : [2, 2 * sb];
  for (let d = 0, t = write ? at : 0, f = write ? 0 : at; d < stride; d += 2, t += toStep, f += fromStep) {
    to[t] = from[f]!;
    to[t + 1] = from[f + 1]!;
  }
}

/**
 * the share of a row's pairs from which a query reads them all: one thread over 100k rows
 * (`node dist/bench/profile-scan.js`) read 85 held pairs (of 192) in 1.5 ms, 100 in 2.0–2.4, 140 in
 * 2.7–3.6, and every pair in 1.8–2.0
 */
const DENSE_SHARE = 0.5;

/** Bytes of an encoded query of `stride` codes: a count, then 32 bytes a pair of dimensions. */
export function queryBytes(stride: number): number {
  return 16 + 16 * stride;
}

/**
 * Encodes a query's codes (`q`, stride int8 values held in any integer array) at `at` for the kernel:
 * the number of pairs it holds (an i32, even), then from at + 16 its pairs, 32 bytes each: the two
 * codes repeated as 8 int16 lanes (a, b, a, b, …), then the pair's number as an i32. The pairs are
 * those that are not all zeros (every pair, when at least `denseShare` of them are not), ascending,
 * read two at a time from the two halves of that list: the first half's i-th beside the second
 * half's. An odd count gets a zero pair at the end of the second half, its run the one just before
 * (in cache). The room is there: strides are whole multiples of 16 bytes.
 */
export function encodeQuery(q: ArrayLike<number>, stride: number, i16: Int16Array, i32: Int32Array, at: number, denseShare = DENSE_SHARE): void {
  const all = stride / 2;
  const held: number[] = [];
  for (let p = 0; p < all; p++) if ((q[2 * p] ?? 0) !== 0 || (q[2 * p + 1] ?? 0) !== 0) held.push(p);
  const list = held.length >= denseShare * all ? Array.from({ length: all }, (_, p) => p) : held;
  const half = Math.ceil(list.length / 2);
  for (let i = 0; i < 2 * half; i++) {
    // even slots from the first half, odd ones from the second
    const from = i % 2 === 0 ? i / 2 : half + (i - 1) / 2;
    const pad = from === list.length;
    const p = pad ? list[from - 1]! : list[from]!;
    const a = pad ? 0 : (q[2 * p] ?? 0);
    const b = pad ? 0 : (q[2 * p + 1] ?? 0);
    const e = at + 16 + 32 * i;
    for (let l = 0; l < 8; l += 2) {
      i16[e / 2 + l] = a;
      i16[e / 2 + l + 1] = b;
    }
    i32[e / 4 + 4] = p;
  }
  i32[at / 4] = 2 * half;
}
