// CPU (and wall time) per `Memory.retrieve` of two builds over one store, in one process: blocks of queries
// alternated between the builds (which goes first flips every block), so both see the same machine
// load. On these shared machines two bench runs of one tree differ by as much as two trees; the
// alternated means tell a 3–5% change. Each build opens the store with its own code (its own
// statements, caches and index) and is warmed before it is counted.
//   node dist/bench/alternate.js --a DIST --b DIST [--corpus templated|realtext] [--store DIR] [--rounds N] [--kind KIND] [--realtext-data DIR] [--once] [--scale one|copies]
// --once: every query of the corpus (realtext: all of RealMem and LoCoMo dev's, not 200) is asked once
// by each build after a warm-up on the first tenth, never again: what a cache kept across a user's
// searches gives when no query repeats (the repeated rounds ask the same 200 again and again).
// DIST: a build's dist folder (another tree's: `git worktree add`, then `npx tsc -p tsconfig.json`
// there). `templated`: the http section's 20k generated turns and its 400 queries; `realtext`: RealMem
// and LoCoMo dev as is and 200 of their queries with the filter kind given (realtext section's KINDS);
// with --scale, scaled to the realtext section's 100k turns (`one`: one user holds them; `copies`: copies
// under new user ids), a store `repro-cluster-realtext --which one|copies` seeds and keeps too.
// The store is seeded by build A on the first run and kept in --store (never in the repository).
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Memory } from '../src/memory/memory.js';
import type { RetrieveRequestInput } from '../src/retrieval/request.js';

const args = process.argv.slice(2);
const opt = (name: string, def?: string): string => {
  const i = args.indexOf(`--${name}`);
  if (i >= 0 && args[i + 1] !== undefined) return args[i + 1]!;
  if (def === undefined) throw new Error(`--${name} is required (see the header of bench/alternate.ts)`);
  return def;
};
const distA = resolve(opt('a'));
const distB = resolve(opt('b'));
const which = opt('corpus', 'templated');
if (which !== 'templated' && which !== 'realtext') throw new Error(`--corpus: templated or realtext, not ${which}`);
const store = resolve(opt('store', `/tmp/nc-alternate-${which}`));
const rounds = Number(opt('rounds', '8'));
const kind = opt('kind', 'plain');
const once = args.includes('--once');
const data = resolve(opt('realtext-data', '../shared/data'));
const scale = opt('scale', 'none');
if (!['none', 'one', 'copies'].includes(scale)) throw new Error(`--scale: one or copies, not ${scale}`);
const BLOCK = which === 'templated' ? 40 : 20;

type HttpSection = typeof import('./sections/http.js');
type RealtextSection = typeof import('./sections/realtext.js');
const load = async <T>(dist: string, path: string): Promise<T> => (await import(pathToFileURL(join(dist, path)).href)) as T;

/** one build's Memory over the store, and the store's queries (built by A: the same for both) */
async function open(dist: string, seed: boolean): Promise<{ memory: Memory; queries: RetrieveRequestInput[] }> {
  const http = await load<HttpSection>(dist, 'bench/sections/http.js');
  const { services, memory } = await http.benchServices(store);
  if (which === 'templated') {
    const { sessions } = http.generate(20_000);
    if (seed) await http.seedSessions(services, sessions);
    return { memory, queries: http.queries(sessions, 400).map((q) => JSON.parse(q) as RetrieveRequestInput) };
  }
  const rt = await load<RealtextSection>(dist, 'bench/sections/realtext.js');
  const realmem = rt.readRealMem(join(data, 'realmem-dev'));
  const locomo = rt.readLocomoCorpus(join(data, 'locomo-dev.json'));
  const base = { sessions: [...realmem.sessions, ...locomo.sessions], queries: [...realmem.queries, ...locomo.queries] };
  const corpus = scale === 'none' ? base : rt.scaled(base, 100_000, scale === 'one');
  if (seed) {
    await http.seedSessions(services, corpus.sessions);
    await services.longTerm.mergeTextIndex();
  }
  if (!(kind in rt.KINDS)) throw new Error(`--kind: one of ${Object.keys(rt.KINDS).join(', ')}`);
  const all = corpus.queries;
  return { memory, queries: (once ? all : rt.sample(all, 200)).map((q) => rt.bodyOf(q, kind)) };
}

mkdirSync(store, { recursive: true });
const seed = !existsSync(join(store, 'bench.db'));
const a = await open(distA, seed);
const b = await open(distB, false);
const queries = a.queries;

/** CPU ms (every thread of this process) and wall ms a retrieve over one block of queries from `from` */
async function block(memory: Memory, from: number): Promise<{ cpu: number; wall: number }> {
  // --once: the last block is what is left, not queries asked again
  const n = once ? Math.min(BLOCK, queries.length - from) : BLOCK;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await memory.retrieve(queries[(from + i) % queries.length]!);
  const d = process.cpuUsage(c0);
  return { cpu: (d.user + d.system) / 1000 / n, wall: (performance.now() - t0) / n };
}

const blocks = Math.ceil(queries.length / BLOCK);
const ms = { a: [] as number[], b: [] as number[] };
const wall = { a: [] as number[], b: [] as number[] };
/** both builds over the block from `from`, which goes first flipping with `turn` */
async function both(turn: number, from: number): Promise<void> {
  for (const side of turn % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
    const t = await block(side === 'a' ? a.memory : b.memory, from);
    ms[side].push(t.cpu);
    wall[side].push(t.wall);
  }
}
if (once) {
  const warm = Math.ceil(blocks / 10);
  for (let i = 0; i < warm; i++) for (const side of [a, b]) await block(side.memory, i * BLOCK);
  for (let i = warm; i < blocks; i++) await both(i, i * BLOCK);
} else {
  for (let i = 0; i < blocks; i++) for (const side of [a, b]) await block(side.memory, i * BLOCK);
  for (let r = 0; r < rounds; r++) for (let i = 0; i < blocks; i++) await both(r + i, i * BLOCK);
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
process.stdout.write(
  `${which}${which === 'realtext' ? ` (${kind}${scale === 'none' ? '' : `, 100k ${scale}`})` : ''}, ${once ? `each of ${queries.length} queries once (the first tenth a warm-up)` : `${rounds} rounds of ${blocks} blocks of ${BLOCK} queries`}: ` +
    `A ${mean(ms.a).toFixed(3)} ms, B ${mean(ms.b).toFixed(3)} ms CPU a retrieve; B/A ${(mean(ms.b) / mean(ms.a)).toFixed(3)}; ` +
    `wall A ${mean(wall.a).toFixed(3)} ms, B ${mean(wall.b).toFixed(3)} ms; B/A ${(mean(wall.b) / mean(wall.a)).toFixed(3)}\n`,
);
process.exit(0);
