import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Arena } from '../../../../src/adapters/embedded/arena.js';
import { EmbedderIndex } from '../../../../src/adapters/embedded/embedder-index.js';
import { ACC_BYTES, blockRowsOf, capacityFor, encodeQuery, queryBytes, writeRow } from '../../../../src/adapters/embedded/layout.js';
import { quantizeInto, strideFor } from '../../../../src/adapters/embedded/quantize.js';
import { scanThread } from '../../../../src/adapters/embedded/scan-thread.js';
import { claim, CONTROL_BYTES, genOf, helpScan, SCRATCH_BYTES, SEQ, splitScan, type ScanJob } from '../../../../src/adapters/embedded/split-scan.js';
import { TopK } from '../../../../src/adapters/embedded/top-k.js';
import { clustered } from './data.js';

const DIM = 64;

/** n rows of `distinct` vectors repeated in turn: every score is shared by several rows (ties) */
function rowsWithTies(n: number, distinct: number): { vectors: Float32Array[]; near: (i: number) => Float32Array } {
  const { vectors, near } = clustered(distinct, DIM, 5, 8);
  return { vectors: Array.from({ length: n }, (_, i) => vectors[i % distinct]!), near };
}

/** the one-thread scan's answer: the r best (score, then row order) by the kernel's float32 scores */
function oneThread(arena: Arena, job: ScanJob, out: number): number[] {
  const top = new TopK(job.r);
  const found = arena.kernels.scanTop(job.query, job.base, job.scales, job.rows, job.stride, job.sb, -Infinity, out, out + job.rows * 8);
  for (let c = 0; c < found; c++) top.push(arena.i32[out / 4 + 2 * c]!, arena.f32[out / 4 + 2 * c + 1]!);
  return Array.from(top.items.subarray(0, top.size));
}

/** an arena holding the rows' codes and one query, as a partition lays them out */
function layout(vectors: Float32Array[], q: Float32Array, r: number): { arena: Arena; job: ScanJob; out: number } {
  const stride = strideFor(DIM);
  const arena = new Arena();
  const cap = capacityFor(vectors.length);
  const sb = blockRowsOf(cap);
  const base = arena.alloc(cap * stride);
  const scales = arena.alloc(cap * 4);
  const codes = new Int8Array(stride);
  vectors.forEach((v, i) => {
    arena.f32[scales / 4 + i] = quantizeInto(v, codes.fill(0), 0);
    writeRow(arena.i8, base, stride, sb, i, codes);
  });
  const query = arena.alloc(queryBytes(stride));
  const q16 = new Int16Array(stride);
  quantizeInto(q, q16, 0);
  encodeQuery(q16, stride, arena.i16, arena.i32, query);
  // the one-thread answer's output, then a block's sums (a split scan's caller needs SCRATCH_BYTES)
  const out = arena.alloc(Math.max(vectors.length * 8 + ACC_BYTES, SCRATCH_BYTES));
  return { arena, job: { query, base, scales, rows: vectors.length, stride, sb, r }, out };
}

describe('split scan (two threads over one partition)', () => {
  const { vectors, near } = rowsWithTies(20_000, 1500);

  it('gives the one-thread answer, ties in row order, whichever thread scans which chunk', () => {
    for (let t = 0; t < 20; t++) {
      const { arena, job, out } = layout(vectors, near(t * 31), 44);
      const want = oneThread(arena, job, out);
      const helperOut = arena.alloc(SCRATCH_BYTES);
      const views = () => [arena.kernels, arena.i32, arena.f32] as const;
      // the helper answers every chunk before the caller claims one; it takes none; it claims the
      // first chunk and stalls (the caller takes it back), then answers the rest; it only stalls
      const stall = (ctrl: Int32Array) => void claim(ctrl, genOf(Atomics.load(ctrl, SEQ)), 5);
      const helpers: Array<(ctrl: Int32Array) => void> = [
        (ctrl) => helpScan(...views(), ctrl, Atomics.load(ctrl, SEQ)),
        () => {},
        (ctrl) => (stall(ctrl), helpScan(...views(), ctrl, Atomics.load(ctrl, SEQ))),
        stall,
      ];
      for (const [h, helper] of helpers.entries()) {
        const ctrl = new Int32Array(new SharedArrayBuffer(CONTROL_BYTES));
        // a control block used before: stale states of other jobs must not count
        Atomics.store(ctrl, SEQ, t * 7);
        const got = splitScan(...views(), ctrl, 1, job, out, helperOut, () => helper(ctrl));
        assert.deepEqual(got.slots, want, `query ${t}, helper ${h}`);
        assert.equal(got.helped, [5, 0, 4, 0][h], `query ${t}, helper ${h}: chunks the helper's answers covered`);
      }
    }
  });

  it('an index sharing its scans with the helper thread returns what a one-thread index returns', async () => {
    const big = rowsWithTies(40_000, 3000);
    const alone = new EmbedderIndex('e', DIM, false);
    const shared = new EmbedderIndex('e', DIM, { minRows: 1000 });
    big.vectors.forEach((v, i) => {
      alone.put(`v${i}`, 'u', `s${i % 3}`, i + 1, v, 0, 0);
      shared.put(`v${i}`, 'u', `s${i % 3}`, i + 1, v, 0, 0);
    });
    const thread = scanThread();
    const before = thread.helped;
    const deadline = Date.now() + 20_000;
    let queries = 0;
    // the helper starts on the first split scan and helps once up (and given a core): query until it has
    while (thread.helped === before || queries < 50) {
      assert.ok(Date.now() < deadline, 'the helper thread never answered a chunk');
      const q = big.near(queries % 3000);
      for (const r of [1, 8, 44, 128]) assert.deepEqual(shared.nearest(q, 'u', undefined, r), alone.nearest(q, 'u', undefined, r));
      // a session's scan stays on one thread, and agrees too
      assert.deepEqual(shared.nearest(q, 'u', 's1', 24), alone.nearest(q, 'u', 's1', 24));
      queries++;
      if (queries % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(thread.helped > before);
  });
});
