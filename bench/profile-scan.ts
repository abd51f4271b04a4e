// The semantic tier's int8 scan kernel alone, on one thread: `--rows` random rows of 384 codes in the
// layout of a big partition (src/adapters/embedded/layout.ts), queries holding some of its 192 pairs
// of dimensions, picked at random as the `hash` embedder's hashed features are. Each query is read the
// way encodeQuery encodes it (a query holding most pairs read whole), and with the pairs it holds
// alone. The floor is above every score, so the figure is the reading and summing only.
// Median of five passes of ten scans each, after one warm-up pass.
//   node dist/bench/profile-scan.js [--rows 100000]
// docs/bench-report.md, round 47.
import { createMemory, instantiateKernels, WASM_PAGE } from '../src/adapters/embedded/kernels.js';
import { BLOCK_ROWS, capacityFor, encodeQuery, queryBytes } from '../src/adapters/embedded/layout.js';
import { mulberry32 } from '../test/fixtures/random.js';

const args = process.argv.slice(2);
const at = args.indexOf('--rows');
const rows = at >= 0 ? Number(args[at + 1]) : 100_000;
const STRIDE = 384;
const PAIRS = STRIDE / 2;
const cap = capacityFor(rows);
const sb = Math.min(cap, BLOCK_ROWS);

const query = 0;
const out = query + queryBytes(STRIDE);
const acc = out + 8 * BLOCK_ROWS;
const scales = acc + 4 * BLOCK_ROWS;
const base = scales + 4 * cap;
const memory = createMemory(Math.ceil((base + cap * STRIDE) / WASM_PAGE));
const kernels = instantiateKernels(memory);
const r = mulberry32(47);
const i8 = new Int8Array(memory.buffer);
for (let i = base; i < base + cap * STRIDE; i++) i8[i] = Math.floor(r() * 61) - 30;
new Float32Array(memory.buffer).fill(1e-4, scales / 4, scales / 4 + cap);
const i16 = new Int16Array(memory.buffer);
const i32 = new Int32Array(memory.buffer);

/** median ms of one scan of every row */
function time(): number {
  const passes: number[] = [];
  for (let p = 0; p < 6; p++) {
    const t = performance.now();
    for (let s = 0; s < 10; s++) kernels.scanTop(query, base, scales, rows, STRIDE, sb, Number.MAX_VALUE, out, acc);
    if (p > 0) passes.push((performance.now() - t) / 10);
  }
  return passes.sort((a, b) => a - b)[2]!;
}

process.stdout.write(`${rows} rows of ${STRIDE} codes, blocks of ${sb} rows; ms a scan (median of 5 × 10)\n`);
for (const held of [7, 20, 45, 71, 85, 100, 140, 192]) {
  const codes = new Int16Array(STRIDE);
  const pairs = Array.from({ length: PAIRS }, (_, p) => p)
    .sort(() => r() - 0.5)
    .slice(0, held);
  for (const p of pairs) (codes[2 * p] = 50), (codes[2 * p + 1] = -40);
  encodeQuery(codes, STRIDE, i16, i32, query);
  const read = i32[query / 4]!;
  const encoded = time();
  encodeQuery(codes, STRIDE, i16, i32, query, Infinity);
  const sparse = time();
  process.stdout.write(`${String(held).padStart(3)} pairs held: as encoded ${encoded.toFixed(2)} ms (${read} pairs read), the held pairs alone ${sparse.toFixed(2)} ms\n`);
}
