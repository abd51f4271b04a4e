// PostgreSQL as the durable store (docs/architecture.md, deployment shapes), beside SQLite and beside
// the raw limit of each engine, in one run. Every part runs on a PostgreSQL database of its own
// (unique name, dropped at the end, whatever happened) and temp SQLite files.
//
// 1. Storage ingest, 100k turns of 20 users: the durable work of the write path through the ports —
//    TurnLog.append in batches of 500 (as `neuralcleave ingest` sends them), and each turn's jobs as the
//    workers run them, 64 in flight: the persist processor itself (scores importance, persistTurn for
//    the important ones, markPersisted) and the embed job's bookkeeping (markEmbedded; its vector write
//    is the semantic tier's, not measured here). The raw limit, same run: exactly the rows those turns
//    leave (turn-log rows with their jobs marked done, the long-term entries of the turns stored), bare
//    into the same tables (the real migrations: same indexes, the generated tsvector on PostgreSQL, the
//    FTS5 triggers on SQLite) in batches of 500 — on PostgreSQL as a multi-row INSERT (unnest, one
//    statement per table per batch, one transaction) and as COPY FROM STDIN, the faster of the two
//    taken; on SQLite as prepared inserts in transactions of 500.
// 2. Long-term full-text search at 100k entries, of one user (the worst case: every match is that
//    user's) and of 1,000 users: LongTermStore.searchText, top 24 (what the retriever asks), p50/p99 on
//    both engines. The raw limit: the bare ranked query of each engine on the same rows — on PostgreSQL
//    a GIN match of the query's lexemes (ORed) ordered by ts_rank_cd, on SQLite the FTS5 MATCH ordered
//    by bm25.
// 3. Accepted turns/s over HTTP in the multi-host shape (see postgres-http.ts): one API process, then
//    two, against the same database and Redis.
// Takes: --quick (10k turns and entries, one round). Adds rows to the report.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import postgres from 'postgres';
import { Postgres } from '../../src/adapters/postgres/pool.js';
import { migrate as migratePostgres } from '../../src/adapters/postgres/migrations.js';
import { PostgresLongTermStore } from '../../src/adapters/postgres/long-term.js';
import { PostgresTurnLog } from '../../src/adapters/postgres/turn-log.js';
import { openDatabase, type Db } from '../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../src/adapters/sqlite/turn-log.js';
import { TransactionBatcher } from '../../src/adapters/sqlite/transaction-batcher.js';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';
import type { LongTermStore } from '../../src/ports/long-term.js';
import type { TurnLog } from '../../src/ports/turn-log.js';
import { ftsMatchExpression } from '../../src/retrieval/query-terms.js';
import { processPersist, type PersistDeps } from '../../workers/persist.js';
import { createDatabase, type TestDatabase } from '../../test/helpers/postgres.js';
import { percentile, type Report, type Section } from '../report.js';
import { ChatText } from './chat-text.js';
import { inputs } from './ingest.js';
import { httpRows } from './postgres-http.js';

const BATCH = 500;
/** worker_concurrency's default: jobs in flight per queue */
const JOBS_IN_FLIGHT = 64;
const IMPORTANCE_THRESHOLD = 0.3;
const EMBEDDER = 'hash-v1';
const TOP_K = 24;
const TURNS_PER_SESSION = 40;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};
const rate = (n: number, ms: number) => n / (ms / 1000);

interface Engines {
  pg: Postgres;
  db: TestDatabase;
  dir: string;
}

/** The turns of one round as the write path would hand them to the turn log (importance left to the persist job). */
function turnsOf(n: number, seed: number): Turn[] {
  return inputs(n, seed).map((t) => ({ ...t, name: null, content_hash: contentHash(t.content), importance: null, pinned: false, metadata: null }));
}

/** What a durable store's ingest left: each stored turn's importance (every turn gets one), the entries stored. */
interface Ingested {
  ms: number;
  importance: Map<string, number>;
  stored: Set<string>;
}

/** The write path's durable work through the ports (see the header), timed from the first append to the last job. */
async function throughPorts(turnLog: TurnLog, longTerm: LongTermStore, turns: readonly Turn[]): Promise<Ingested> {
  const deps: PersistDeps = { turnLog, longTerm, importanceThreshold: IMPORTANCE_THRESHOLD };
  const persist = new PQueue({ concurrency: JOBS_IN_FLIGHT });
  const embed = new PQueue({ concurrency: JOBS_IN_FLIGHT });
  const importance = new Map<string, number>();
  const stored = new Set<string>();
  const failures: unknown[] = [];
  const started = performance.now();
  for (let i = 0; i < turns.length; i += BATCH) {
    const { accepted } = await turnLog.append(turns.slice(i, i + BATCH));
    for (const t of accepted) {
      void persist
        .add(async () => {
          const r = await processPersist({ user_id: t.user_id, turn_id: t.id }, deps);
          if (!r) throw new Error(`persist of ${t.id} found no turn`);
          importance.set(t.id, r.importance);
          if (r.stored) stored.add(t.id);
        })
        .catch((e: unknown) => failures.push(e));
      void embed.add(() => turnLog.markEmbedded(t.user_id, [t.id], EMBEDDER)).catch((e: unknown) => failures.push(e));
    }
  }
  await Promise.all([persist.onIdle(), embed.onIdle()]);
  const ms = performance.now() - started;
  if (failures.length > 0) throw new Error(`ingest jobs failed (${failures.length}): ${String(failures[0])}`);
  const counts = await turnLog.counts();
  const entries = await longTerm.count();
  if (counts.total !== turns.length || counts.pending_embed + counts.pending_persist > 0 || entries !== stored.size) {
    throw new Error(`ingest incomplete: ${JSON.stringify({ ...counts, entries, stored: stored.size, turns: turns.length })}`);
  }
  return { ms, importance, stored };
}

/** The entry a stored turn leaves in the long-term store (what the persist processor writes). */
function entryOf(t: Turn, importance: number): MemoryEntry {
  return { ...t, kind: 'turn', importance, covers: null, updated_at: t.created_at };
}

// ---------------------------------------------------------------------------------------------------
// the bare rows

const TURN_ROW = ['id', 'user_id', 'session_id', 'role', 'name', 'content', 'content_hash', 'created_at', 'importance', 'pinned', 'metadata', 'accepted_at', 'embedded_with', 'persisted_at'] as const;
const ENTRY_ROW = ['id', 'user_id', 'session_id', 'role', 'name', 'kind', 'content', 'content_hash', 'importance', 'pinned', 'metadata', 'covers', 'created_at', 'updated_at'] as const;
const PG_TYPES: Record<string, string> = {
  id: 'text', user_id: 'text', session_id: 'text', role: 'text', name: 'text', kind: 'text', content: 'text', content_hash: 'text', created_at: 'timestamptz',
  updated_at: 'timestamptz', importance: 'float8', pinned: 'bool', metadata: 'jsonb', covers: 'jsonb', accepted_at: 'int8', embedded_with: 'text', persisted_at: 'int8',
};
type BareRow = Record<string, string | number | boolean | null>;

/** The final rows of a round: every turn with both jobs done, and the entries of the stored ones. */
function finalRows(turns: readonly Turn[], done: Ingested): Array<{ turn: BareRow; entry: BareRow | null }> {
  const now = Date.now();
  return turns.map((t) => {
    const importance = done.importance.get(t.id)!;
    const turn: BareRow = { ...t, metadata: null, importance, accepted_at: now, embedded_with: EMBEDDER, persisted_at: now };
    const entry = done.stored.has(t.id) ? ({ ...entryOf(t, importance), metadata: null, covers: null } as BareRow) : null;
    return { turn, entry };
  });
}

function unnestInsert(table: string, cols: readonly string[]): string {
  return `INSERT INTO ${table} (${cols.join(', ')}) SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${PG_TYPES[c]}[]`).join(', ')})`;
}

/** Multi-row INSERT: per batch one transaction, one unnest statement per table. */
async function bareInsert(pg: Postgres, rows: ReturnType<typeof finalRows>): Promise<number> {
  const turnSql = unnestInsert('turns', TURN_ROW);
  const entrySql = unnestInsert('entries', ENTRY_ROW);
  const columns = (cols: readonly string[], rs: BareRow[]) => cols.map((c) => rs.map((r) => r[c] ?? null));
  const started = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    const entries = batch.flatMap((r) => (r.entry ? [r.entry] : []));
    await pg.tx(async (tx) => {
      await tx.run(turnSql, columns(TURN_ROW, batch.map((r) => r.turn)));
      if (entries.length > 0) await tx.run(entrySql, columns(ENTRY_ROW, entries));
    });
  }
  return performance.now() - started;
}

/** A value in COPY's text format: tab-separated, `\N` for NULL, backslash escapes. */
function copyField(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  return String(v).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
}

/** COPY FROM STDIN: per batch one transaction, one COPY per table (the `postgres` driver streams it). */
async function bareCopy(url: string, rows: ReturnType<typeof finalRows>): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const copy = async (tx: postgres.TransactionSql, table: string, cols: readonly string[], rs: BareRow[]) => {
    const w = await tx.unsafe(`COPY ${table} (${cols.join(', ')}) FROM STDIN`).writable();
    const done = new Promise<void>((resolve, reject) => {
      w.once('finish', resolve);
      w.once('error', reject);
    });
    w.end(rs.map((r) => `${cols.map((c) => copyField(r[c])).join('\t')}\n`).join(''));
    await done;
  };
  try {
    const started = performance.now();
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      const entries = batch.flatMap((r) => (r.entry ? [r.entry] : []));
      await sql.begin(async (tx) => {
        await copy(tx, 'turns', TURN_ROW, batch.map((r) => r.turn));
        if (entries.length > 0) await copy(tx, 'entries', ENTRY_ROW, entries);
      });
    }
    return performance.now() - started;
  } finally {
    await sql.end();
  }
}

/** Prepared inserts in transactions of BATCH turns, on a fresh file. */
function bareSqlite(db: Db, rows: ReturnType<typeof finalRows>): number {
  const insert = (table: string, cols: readonly string[]) => db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
  const turn = insert('turns', TURN_ROW);
  const entry = insert('entries', ENTRY_ROW);
  const sqliteRow = (r: BareRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]));
  const started = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) {
    db.transaction(() => {
      for (const r of rows.slice(i, i + BATCH)) {
        turn.run(sqliteRow(r.turn));
        if (r.entry) entry.run(sqliteRow(r.entry));
      }
    })();
  }
  return performance.now() - started;
}

const emptyTables = (pg: Postgres) => pg.run('TRUNCATE turns, entries');

async function ingestRows(report: Report, e: Engines, n: number, rounds: number): Promise<void> {
  const runs = { pg: [] as number[], sqlite: [] as number[], insert: [] as number[], copy: [] as number[], sqliteBare: [] as number[] };
  let storedShare = 0;
  for (let round = 0; round < rounds; round++) {
    const turns = turnsOf(n, 100 + round); // fresh ids and text each round
    await emptyTables(e.pg);
    const pgDone = await throughPorts(new PostgresTurnLog(e.pg), new PostgresLongTermStore(e.pg), turns);
    runs.pg.push(rate(n, pgDone.ms));

    const file = join(e.dir, `ingest-${round}.db`);
    const db = openDatabase(file);
    try {
      const writes = new TransactionBatcher(db);
      const sqliteDone = await throughPorts(new SqliteTurnLog(db, writes), new SqliteLongTermStore(db, writes), turns);
      runs.sqlite.push(rate(n, sqliteDone.ms));
    } finally {
      db.close();
    }
    storedShare = pgDone.stored.size / n;
    // the raw limit writes what the PostgreSQL run left (both runs score importance alike)
    const rows = finalRows(turns, pgDone);
    await emptyTables(e.pg);
    runs.insert.push(rate(n, await bareInsert(e.pg, rows)));
    await emptyTables(e.pg);
    runs.copy.push(rate(n, await bareCopy(e.db.url, rows)));
    const bareDb = openDatabase(join(e.dir, `bare-${round}.db`));
    try {
      runs.sqliteBare.push(rate(n, bareSqlite(bareDb, rows)));
    } finally {
      bareDb.close();
    }
  }
  const m = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<keyof typeof runs, number>;
  const limit = Math.max(m.insert, m.copy);
  const limitLabel = m.copy >= m.insert ? 'bare batched COPY of the same rows' : 'bare multi-row INSERT of the same rows';
  const data = `${n.toLocaleString('en-US')} turns of 20 users, batches of ${BATCH}, ${JOBS_IN_FLIGHT} jobs in flight per queue, median of ${rounds}; ${(storedShare * 100).toFixed(0)}% scored important and stored long-term`;
  const list = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
  report.add({
    section: 'postgres', metric: 'storage ingest (turn log + long-term), PostgreSQL', value: m.pg, unit: 'turns/s', baseline: limit, baselineLabel: limitLabel,
    ratio: m.pg / limit, target: '≥ 0.5 of bare insert', met: m.pg / limit >= 0.5,
    note: `${data}; bare multi-row INSERT ${Math.round(m.insert)}, COPY ${Math.round(m.copy)} turns/s; runs: ${list(runs.pg)}`,
  });
  report.add({
    section: 'postgres', metric: 'storage ingest (turn log + long-term), SQLite', value: m.sqlite, unit: 'turns/s', baseline: m.sqliteBare, baselineLabel: 'bare batched insert of the same rows',
    ratio: m.sqlite / m.sqliteBare, target: '≥ 0.5 of bare insert', met: m.sqlite / m.sqliteBare >= 0.5, note: `${data}; runs: ${list(runs.sqlite)} vs ${list(runs.sqliteBare)}`,
  });
  report.add({
    section: 'postgres', metric: 'storage ingest, PostgreSQL beside SQLite', value: m.pg, unit: 'turns/s', baseline: m.sqlite, baselineLabel: 'SQLite store, same turns, same run',
    ratio: m.pg / m.sqlite, note: 'no target: a shared database pays a round trip and a WAL flush per commit that an embedded file does not',
  });
}

// ---------------------------------------------------------------------------------------------------
// full-text search

/** `n` long-term entries over `users` users: the retrieve bench's chat text, the same on both engines. */
async function fillEntries(stores: LongTermStore[], n: number, users: number): Promise<void> {
  const text = new ChatText(7);
  const start = Date.parse('2024-01-01T00:00:00Z');
  for (let from = 0; from < n; from += 2_000) {
    const entries: MemoryEntry[] = [];
    for (let i = from; i < Math.min(n, from + 2_000); i++) {
      const nth = Math.floor(i / users);
      const { role, content } = text.turn(nth);
      const created_at = new Date(start + i * 60_000).toISOString();
      entries.push({
        id: `t-${i}`, user_id: `user-${i % users}`, session_id: `s-${Math.floor(nth / TURNS_PER_SESSION)}`, role, name: null, kind: 'turn', content,
        content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at, updated_at: created_at,
      });
    }
    await Promise.all(stores.map((s) => s.upsert(entries)));
  }
}

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function ftsRows(report: Report, e: Engines, n: number, users: number, queries: number): Promise<void> {
  await emptyTables(e.pg);
  const db = openDatabase(join(e.dir, `fts-${users}.db`));
  try {
    const pgStore = new PostgresLongTermStore(e.pg);
    const sqliteStore = new SqliteLongTermStore(db);
    await fillEntries([pgStore, sqliteStore], n, users);
    await e.pg.run('ANALYZE entries');
    const bareSqlite = db.prepare(
      `SELECT e.id, bm25(entries_fts, 1.0, 2.0) AS rank FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid
       WHERE entries_fts MATCH @match AND e.user_id = @user_id ORDER BY rank LIMIT @limit`,
    );
    // the query's lexemes, ORed (the store's match), ranked by PostgreSQL's own cover-density rank
    const barePg = `WITH q AS (SELECT replace(plainto_tsquery('nc_english', $2)::text, ' & ', ' | ')::tsquery AS q)
      SELECT e.id, ts_rank_cd(e.tsv, q.q) AS rank FROM entries e, q WHERE e.user_id = $1 AND e.tsv @@ q.q ORDER BY rank DESC LIMIT $3`;
    const text = new ChatText(11);
    const qs = Array.from({ length: queries }, (_, i) => ({ q: text.query(), user: `user-${(i * 7919) % users}` }));
    const ms = { pg: [] as number[], sqlite: [] as number[], barePg: [] as number[], bareSqlite: [] as number[] };
    const one = async ({ q, user }: { q: string; user: string }, record: boolean) => {
      const match = ftsMatchExpression(q);
      const t = {
        pg: await timed(() => pgStore.searchText(user, q, { limit: TOP_K })),
        sqlite: await timed(() => sqliteStore.searchText(user, q, { limit: TOP_K })),
        barePg: await timed(() => e.pg.query(barePg, [user, q, TOP_K])),
        bareSqlite: await timed(() => (match ? bareSqlite.all({ match, user_id: user, limit: TOP_K }) : [])),
      };
      if (record) for (const k of Object.keys(ms) as Array<keyof typeof ms>) ms[k].push(t[k]);
    };
    for (const q of qs.slice(0, 20)) await one(q, false); // warm-up: statement plans, caches, page cache
    for (const q of qs) await one(q, true);
    const s = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, stats(v)])) as Record<keyof typeof ms, { p50: number; p99: number }>;
    const label = `${n >= 1000 ? `${n / 1000}k` : n} entries, ${users.toLocaleString('en-US')} user${users > 1 ? 's' : ''}`;
    const base = { section: 'postgres', unit: 'ms' };
    const data = `${queries} queries, top ${TOP_K}, one at a time`;
    for (const p of ['p50', 'p99'] as const) {
      report.add({
        ...base, metric: `long-term FTS ${p}, ${label}, PostgreSQL`, value: s.pg[p], baseline: s.barePg[p], baselineLabel: `bare GIN match ranked by ts_rank_cd, ${p}`,
        ratio: s.barePg[p] / s.pg[p], note: `${data}; BM25 computed in SQL over the user's statistics; SQLite ${p} ${s.sqlite[p].toFixed(3)} ms`,
      });
      report.add({
        ...base, metric: `long-term FTS ${p}, ${label}, SQLite`, value: s.sqlite[p], baseline: s.bareSqlite[p], baselineLabel: `bare FTS5 MATCH ranked by bm25, ${p}`,
        ratio: s.bareSqlite[p] / s.sqlite[p], note: data,
      });
      report.add({
        ...base, metric: `long-term FTS ${p}, ${label}, PostgreSQL beside SQLite`, value: s.pg[p], baseline: s.sqlite[p], baselineLabel: `SQLite store, same entries and queries, ${p}`,
        ratio: s.sqlite[p] / s.pg[p],
      });
    }
  } finally {
    db.close();
  }
}

const section: Section = async (report, { quick }) => {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-pg-'));
  const db = await createDatabase('nc_bench');
  const pg = new Postgres({ url: db.url, max: 10, applicationName: 'neuralcleave-bench' });
  try {
    await migratePostgres(pg);
    const e: Engines = { pg, db, dir };
    const n = quick ? 10_000 : 100_000;
    await ingestRows(report, e, n, quick ? 1 : 2);
    await ftsRows(report, e, n, 1, quick ? 100 : 400);
    await ftsRows(report, e, n, 1_000, quick ? 100 : 400);
  } finally {
    await pg.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  await httpRows(report, { quick });
};

export default section;
