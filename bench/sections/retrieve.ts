// Retrieve latency (p50/p99) of the one-pass retriever at 10k and 100k stored turns (384-dimension
// vectors of the `hash` embedder over chat-like text, the same text in the long-term FTS), for the
// worst case — every turn belongs to ONE user, so the semantic tier scans 100k vectors — and for
// many users (100k turns over 1,000 users). Beside it, the raw limit measured in the same run: a plain
// JS float32 scan (top 8) of the same user's vectors plus the bare FTS5 query the long-term tier runs,
// and the int8 scan floor: the WebAssembly kernel alone passing once over the same user's int8 codes
// (no selection, no rerank, no row reads) — the least any scan of those bytes costs here.
// Also: recall@8 and @24 of the embedded index against that exact scan, its cold-load time and
// memory per vector.
// Takes: nothing (a temp SQLite file). Adds rows to the report; removes its files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { wire, type Services } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';
import { HashEmbedder } from '../../src/embedding/hash.js';
import { Arena } from '../../src/adapters/embedded/arena.js';
import { ACC_BYTES, blockRowsOf, capacityFor, encodeQuery, queryBytes, writeRow } from '../../src/adapters/embedded/layout.js';
import { quantizeInto, strideFor } from '../../src/adapters/embedded/quantize.js';
import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { TopK } from '../../src/adapters/embedded/top-k.js';
import type { VectorPoint } from '../../src/ports/vector-index.js';
import { percentile, type Report, type Section } from '../report.js';
import { ChatText } from './chat-text.js';
import { bareFtsMatch, sqliteOf } from '../sqlite.js';

const DIM = 384;
const TURNS_PER_SESSION = 40;
const START = Date.parse('2024-01-01T00:00:00Z');

export interface Corpus {
  services: Services;
  embedder: HashEmbedder;
  text: ChatText;
  /** every stored vector of each user, contiguous, for the bare scan */
  byUser: Map<string, { vectors: Float32Array; ids: string[]; n: number }>;
  total: number;
}

/** Stores turns `from…to` (each user in turn gets the next one) in the long-term FTS and the vector index. */
export async function fill(c: Corpus, to: number, users: number): Promise<void> {
  const batch = 2_000;
  for (let start = c.total; start < to; start += batch) {
    const entries: MemoryEntry[] = [];
    const points: VectorPoint[] = [];
    for (let i = start; i < Math.min(to, start + batch); i++) {
      const user = `user-${i % users}`;
      const nth = Math.floor(i / users); // this user's nth turn
      const { role, content } = c.text.turn(nth);
      const id = `t-${i}`;
      const created_at = new Date(START + i * 60_000).toISOString();
      const session_id = `s-${Math.floor(nth / TURNS_PER_SESSION)}`;
      const e: MemoryEntry = {
        id, user_id: user, session_id, role, name: null, kind: 'turn', content, content_hash: contentHash(content),
        importance: 0.5, pinned: false, metadata: null, covers: null, created_at, updated_at: created_at,
      };
      entries.push(e);
      const vector = c.embedder.embedOne(content);
      points.push({ id, vector, payload: { user_id: user, session_id, role, name: null, kind: 'turn', content, content_hash: e.content_hash, created_at } });
      let u = c.byUser.get(user);
      if (!u) c.byUser.set(user, (u = { vectors: new Float32Array(DIM * 1024), ids: [], n: 0 }));
      if ((u.n + 1) * DIM > u.vectors.length) {
        const grown = new Float32Array(u.vectors.length * 2);
        grown.set(u.vectors);
        u.vectors = grown;
      }
      u.vectors.set(vector, u.n * DIM);
      u.ids.push(id);
      u.n++;
    }
    sqliteOf(c.services).longTerm.upsertSync(entries);
    await c.services.vectors.upsert(c.embedder, points);
  }
  c.total = to;
}

/** The plain JS float32 scan: cosine (unit vectors: dot) of every vector of the user, top k, best first. */
function bareScan(u: { vectors: Float32Array; ids: string[]; n: number }, q: Float32Array, k: number): number[] {
  const top = new TopK(k);
  const v = u.vectors;
  for (let i = 0; i < u.n; i++) {
    let dot = 0;
    const o = i * DIM;
    for (let j = 0; j < DIM; j++) dot += v[o + j]! * q[j]!;
    top.push(i, dot);
  }
  return Array.from(top.scores.subarray(0, top.size));
}

/** Each user's vectors as int8 codes in one kernel arena, for the floor: one kernel pass over them. */
class Int8Floor {
  private readonly arena = new Arena();
  private readonly stride = strideFor(DIM);
  private readonly blocks = new Map<string, { base: number; scales: number; n: number; sb: number }>();
  private scratch = 0;

  /** ms of one pass of the scan kernel over every code of the user (a floor no row passes: nothing handed back) */
  scan(user: string, u: { vectors: Float32Array; n: number }, q: Float32Array): number {
    const a = this.arena;
    const stride = this.stride;
    let block = this.blocks.get(user);
    if (!block) {
      const cap = capacityFor(u.n);
      const base = a.alloc(cap * stride);
      const scales = a.alloc(cap * 4);
      const codes = new Int8Array(stride);
      for (let i = 0; i < u.n; i++) {
        a.f32[scales / 4 + i] = quantizeInto(u.vectors.subarray(i * DIM, (i + 1) * DIM), codes.fill(0), 0);
        writeRow(a.i8, base, stride, blockRowsOf(cap), i, codes);
      }
      this.blocks.set(user, (block = { base, scales, n: u.n, sb: blockRowsOf(cap) }));
    }
    if (this.scratch === 0) this.scratch = a.alloc(queryBytes(stride) + 16 + ACC_BYTES);
    const codes = new Int16Array(stride);
    quantizeInto(q, codes, 0);
    encodeQuery(codes, stride, a.i16, a.i32, this.scratch);
    const out = this.scratch + queryBytes(stride);
    const t = performance.now();
    a.kernels.scanTop(this.scratch, block.base, block.scales, block.n, stride, block.sb, Infinity, out, out + 16);
    return performance.now() - t;
  }
}

/**
 * Recall@k against the exact scan's scores: the share of the exact top k matched by hits scoring at
 * least the exact k-th score (ties — the same text said twice — make any of the tied ids right).
 */
function recallAt(k: number, exactScores: number[], hits: ReadonlyArray<{ score: number }>): number {
  const want = Math.min(k, exactScores.length);
  if (want === 0) return 1;
  const kth = exactScores[want - 1]! - 1e-5;
  return Math.min(want, hits.slice(0, k).filter((h) => h.score >= kth).length) / want;
}

function p50(xs: number[]): string {
  return percentile([...xs].sort((a, b) => a - b), 50).toFixed(3);
}

function stats(xs: number[]): { p50: number; p99: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
}

/** Measures retrieval at the corpus's current size, over queries from users picked by `userOf`. */
export async function measure(
  report: Report | null,
  c: Corpus,
  label: string,
  queries: number,
  userOf: (i: number) => string,
  targets: { p50?: number; p99?: number } = {},
): Promise<{ p50: number; p99: number; floorP50: number }> {
  const { services } = c;
  const bareFts = sqliteOf(services).db.prepare(
    `SELECT e.id, -bm25(entries_fts, 1.0, 2.0) AS rank FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid
     WHERE entries_fts MATCH @match AND e.user_id = @user_id ORDER BY bm25(entries_fts, 1.0, 2.0) LIMIT @limit`,
  );
  const qs = Array.from({ length: queries }, (_, i) => ({ text: c.text.query(), user: userOf(i) }));
  // short-term: the session the user is in now holds its last turns, as in a live chat
  for (const user of new Set(qs.map((q) => q.user))) {
    const u = c.byUser.get(user)!;
    const session_id = `s-${Math.floor((u.n - 1) / TURNS_PER_SESSION)}`;
    const recent: Turn[] = u.ids.slice(-10).map((id, i) => ({
      id, user_id: user, session_id, role: i % 2 ? 'assistant' : 'user', name: null, content: `recent turn ${i} of ${user}`, content_hash: contentHash(`recent ${id}`),
      created_at: new Date().toISOString(), importance: null, pinned: false, metadata: null,
    }));
    await services.shortTerm.push(recent);
  }
  const sessionOf = (user: string) => `s-${Math.floor((c.byUser.get(user)!.n - 1) / TURNS_PER_SESSION)}`;
  for (const q of qs.slice(0, 5)) await services.retriever.retrieve({ query: q.text, user_id: q.user, session_id: sessionOf(q.user), top_k: 8 }); // warm-up (and lazy load)

  const full: number[] = [];
  const tierMs: Record<'short_term' | 'semantic' | 'long_term', number[]> = { short_term: [], semantic: [], long_term: [] };
  const bareFtsMs: number[] = [];
  const semantic: number[] = [];
  const bare: number[] = [];
  const bareSemantic: number[] = [];
  const int8Floor: number[] = [];
  const floor = new Int8Floor();
  let hits8 = 0;
  let hits24 = 0;
  let skipped = 0;
  // CPU time (user + system) of a pass and of its parts, summed: unlike wall time it hardly moves with
  // the machine's load, so it is the profile of where a pass's time goes
  const cpu = { retrieve: 0, semantic: 0, fts: 0, floor: 0 };
  const cpuOf = async <T>(key: keyof typeof cpu, fn: () => T | Promise<T>): Promise<T> => {
    const c0 = process.cpuUsage();
    const out = await fn();
    const d = process.cpuUsage(c0);
    cpu[key] += (d.user + d.system) / 1000;
    return out;
  };
  for (const q of qs) {
    let t = performance.now();
    const r = await cpuOf('retrieve', () => services.retriever.retrieve({ query: q.text, user_id: q.user, session_id: sessionOf(q.user), top_k: 8 }));
    full.push(performance.now() - t);
    await cpuOf('fts', () => services.longTerm.searchText(q.user, q.text, { limit: 24 }));
    if (r.tiers.semantic.status !== 'ok' || r.tiers.long_term.status !== 'ok') skipped++;
    for (const tier of ['short_term', 'semantic', 'long_term'] as const) tierMs[tier].push(r.tiers[tier].ms);

    const qv = c.embedder.embedOne(q.text);
    t = performance.now();
    const got = await cpuOf('semantic', () => services.vectors.search(c.embedder, qv, { user_id: q.user }, 24));
    semantic.push(performance.now() - t);

    const u = c.byUser.get(q.user)!;
    t = performance.now();
    const exact = bareScan(u, qv, 24);
    const scanMs = performance.now() - t;
    bareSemantic.push(scanMs);
    int8Floor.push(await cpuOf('floor', () => floor.scan(q.user, u, qv)));
    const match = bareFtsMatch(q.user, q.text);
    t = performance.now();
    if (match) bareFts.all({ match, user_id: q.user, limit: 24 });
    bareFtsMs.push(performance.now() - t);
    bare.push(scanMs + bareFtsMs[bareFtsMs.length - 1]!);

    hits8 += recallAt(8, exact, got);
    hits24 += recallAt(24, exact, got);
  }
  const f = stats(full);
  const b = stats(bare);
  const s = stats(semantic);
  const bs = stats(bareSemantic);
  const fl = stats(int8Floor);
  if (report) {
    const base = { section: 'retrieve', unit: 'ms' };
    report.add({
      ...base, metric: `retrieve p50, ${label}`, value: f.p50, baseline: b.p50, baselineLabel: 'bare float32 scan + bare FTS query, p50', ratio: b.p50 / f.p50,
      ...(targets.p50 !== undefined ? { target: `≤ ${targets.p50} ms`, met: f.p50 <= targets.p50 } : {}),
      note: `${queries} queries, top_k 8; tier p50 as the retriever reports them (they overlap): short-term ${p50(tierMs.short_term)}, semantic ${p50(tierMs.semantic)} (query embedding included), long-term FTS ${p50(tierMs.long_term)} ms; bare FTS query alone p50 ${p50(bareFtsMs)} ms; int8 scan floor p50 ${fl.p50.toFixed(3)} ms${skipped ? `; ${skipped} passes skipped a tier` : ''}`,
    });
    report.add({
      ...base, metric: `retrieve p99, ${label}`, value: f.p99, baseline: b.p99, baselineLabel: 'bare float32 scan + bare FTS query, p99', ratio: b.p99 / f.p99,
      ...(targets.p99 !== undefined ? { target: `≤ ${targets.p99} ms`, met: f.p99 <= targets.p99 } : {}),
    });
    report.add({
      ...base, metric: `semantic tier search p50 (k 24), ${label}`, value: s.p50, baseline: fl.p50, baselineLabel: 'int8 scan floor: the kernel alone over the same codes, p50', ratio: fl.p50 / s.p50,
      note: `p99 ${s.p99.toFixed(3)} ms (floor p99 ${fl.p99.toFixed(3)} ms); bare float32 JS scan p50 ${bs.p50.toFixed(3)} ms, p99 ${bs.p99.toFixed(3)} ms; the search also selects its candidates, reads their rows (payloads, float32 rerank) from SQLite and reranks`,
    });
    const per = (x: number) => (x / queries).toFixed(3);
    report.add({
      ...base, metric: `retrieve CPU time per pass, ${label}`, value: cpu.retrieve / queries,
      note: `profile (CPU ms per pass, mean): semantic search ${per(cpu.semantic)} (int8 kernel alone ${per(cpu.floor)}), long-term FTS ${per(cpu.fts)}, the rest — query embedding, short-term, fusion and ranking, context lookups, budget timers — ${per(Math.max(0, cpu.retrieve - cpu.semantic - cpu.fts))}; CPU of every thread (the semantic scan may share a big user's partition with its helper thread)`,
    });
    report.add({ section: 'retrieve', metric: `recall@8 vs exact scan, ${label}`, value: hits8 / queries, unit: '', target: '≥ 0.99', met: hits8 / queries >= 0.99, note: `recall@24: ${(hits24 / queries).toFixed(4)}` });
  }
  return { p50: f.p50, p99: f.p99, floorP50: fl.p50 };
}

/** A second index on the same file: how long its first search takes (the lazy load) and what it holds. */
async function coldLoad(report: Report, c: Corpus, label: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const ix = new EmbeddedVectorIndex(sqliteOf(c.services).db);
  const t = performance.now();
  await ix.search(c.embedder, c.embedder.embedOne('hiking in Lisbon'), { user_id: 'user-0' }, 8);
  const ms = performance.now() - t;
  gc?.();
  const after = process.memoryUsage();
  const [st] = ix.stats();
  const bytes = after.heapUsed + after.external - (before.heapUsed + before.external);
  report.add({ section: 'retrieve', metric: `embedded index cold load, ${label}`, value: ms, unit: 'ms', note: `first search of a process: reads ${st!.vectors} vectors from SQLite` });
  report.add({
    section: 'retrieve', metric: `embedded index memory per vector, ${label}`, value: bytes / st!.vectors, unit: 'B',
    note: `heap + external growth${gc ? '' : ' (run with --expose-gc for a clean figure)'}; arena ${(st!.arenaUsed / st!.vectors).toFixed(0)} B/vector used, ${(st!.arenaBytes / 2 ** 20).toFixed(1)} MiB reserved; float32 would be ${DIM * 4} B`,
  });
  await ix.close();
}

export async function corpus(dir: string, name: string): Promise<Corpus> {
  const config = parseConfig({ sqlite_path: join(dir, `${name}.db`), embedding_model: 'hash', log_level: 'silent' });
  const services = await wire(config, { logger: pino({ level: 'silent' }), runWorkers: false, reconcile: false });
  return { services, embedder: new HashEmbedder(DIM), text: new ChatText(7), byUser: new Map(), total: 0 };
}

const section: Section = async (report, { quick }) => {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-retrieve-'));
  const queries = quick ? 100 : 400;
  try {
    const one = await corpus(dir, 'one-user');
    try {
      await fill(one, 10_000, 1);
      await measure(report, one, '10k turns, 1 user', queries, () => 'user-0');
      await fill(one, 100_000, 1);
      await measure(report, one, '100k turns, 1 user', queries, () => 'user-0', { p50: 5, p99: 15 });
      await coldLoad(report, one, '100k vectors');
    } finally {
      await one.services.close();
    }
    const many = await corpus(dir, 'many-users');
    try {
      const users = 1_000;
      await fill(many, quick ? 20_000 : 100_000, users);
      const label = `${quick ? '20k' : '100k'} turns, ${users} users`;
      await measure(report, many, label, queries, (i) => `user-${(i * 7919) % users}`, quick ? {} : { p50: 1.5 });
    } finally {
      await many.services.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export default section;
