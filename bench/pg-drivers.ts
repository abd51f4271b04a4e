// Measures the two PostgreSQL drivers on npm (`pg`, `postgres`) on this service's access pattern,
// in one run, on a scratch database it creates and drops: multi-row inserts of turn-log rows in
// transactions, small indexed queries (one at a time, and 16 in flight over a pool of 4) and a
// ranked full-text query. Usage: node --import tsx bench/pg-drivers.ts [--rows N]
import pg from 'pg';
import postgres from 'postgres';
import { createDatabase } from '../test/helpers/postgres.js';
import { mulberry32 } from '../test/fixtures/random.js';
import { percentile } from './report.js';

const args = process.argv.slice(2);
const ROWS = Number(args[args.indexOf('--rows') + 1] ?? 0) || 20_000;
const BATCH = 500;
const POOL = 4;

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu sister nurse hospital garden paris berlin coffee piano violin marathon'.split(' ');
const rand = mulberry32(7);
const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

interface Row {
  id: string;
  user_id: string;
  session_id: string;
  role: string;
  name: string | null;
  content: string;
  content_hash: string;
  created_at: string;
  importance: number;
  pinned: boolean;
  metadata: string | null;
  accepted_at: number;
}
const COLS = ['id', 'user_id', 'session_id', 'role', 'name', 'content', 'content_hash', 'created_at', 'importance', 'pinned', 'metadata', 'accepted_at'] as const;
const TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'timestamptz', 'float8', 'bool', 'jsonb', 'int8'];

function rows(prefix: string): Row[] {
  return Array.from({ length: ROWS }, (_, i) => ({
    id: `${prefix}-${i}`,
    user_id: `u${i % 50}`,
    session_id: `s${i % 400}`,
    role: i % 2 ? 'assistant' : 'user',
    name: i % 7 === 0 ? 'Dolores' : null,
    content: sentence(12 + (i % 30)),
    content_hash: `h${prefix}${i}`,
    created_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    importance: (i % 10) / 10,
    pinned: false,
    metadata: i % 5 === 0 ? JSON.stringify({ kind: 'turn', n: i }) : null,
    accepted_at: Date.now(),
  }));
}

const SCHEMA = `
  DROP TABLE IF EXISTS turns;
  CREATE TABLE turns (
    id text NOT NULL, user_id text NOT NULL, session_id text NOT NULL, role text NOT NULL, name text,
    content text NOT NULL, content_hash text NOT NULL, created_at timestamptz NOT NULL, importance float8,
    pinned bool NOT NULL, metadata jsonb, accepted_at int8 NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', content), 'B') || setweight(to_tsvector('english', coalesce(name, '')), 'A')) STORED,
    PRIMARY KEY (user_id, id));
  CREATE INDEX turns_session ON turns (user_id, session_id, created_at);
  CREATE INDEX turns_tsv ON turns USING gin (tsv);`;

const UNNEST = `INSERT INTO turns (${COLS.join(', ')}) SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT DO NOTHING`;
const columnsOf = (batch: Row[]) => COLS.map((c) => batch.map((r) => r[c]));
const valuesSql = (n: number) =>
  `INSERT INTO turns (${COLS.join(', ')}) VALUES ${Array.from({ length: n }, (_, r) => `(${COLS.map((_, c) => `$${r * COLS.length + c + 1}`).join(', ')})`).join(', ')} ON CONFLICT DO NOTHING`;
const FTS = `SELECT id, content, ts_rank_cd(tsv, q) AS rank FROM turns, websearch_to_tsquery('english', $2) q
  WHERE user_id = $1 AND tsv @@ q ORDER BY rank DESC LIMIT 8`;

interface Driver {
  name: string;
  insertValues(batch: Row[]): Promise<void>;
  insertUnnest(batch: Row[]): Promise<void>;
  byId(user: string, id: string): Promise<unknown>;
  fts(user: string, q: string): Promise<unknown>;
  exec(sql: string): Promise<void>;
  end(): Promise<void>;
}

function pgDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const tx = async (fn: (c: pg.PoolClient) => Promise<unknown>) => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await fn(c);
      await c.query('COMMIT');
    } catch (e) {
      await c.query('ROLLBACK');
      throw e;
    } finally {
      c.release();
    }
  };
  return {
    name: 'pg',
    insertValues: (b) => tx((c) => c.query(valuesSql(b.length), b.flatMap((r) => COLS.map((k) => r[k])))),
    insertUnnest: (b) => tx((c) => c.query({ name: 'unnest', text: UNNEST, values: columnsOf(b) })),
    byId: (u, id) => pool.query({ name: 'byid', text: 'SELECT * FROM turns WHERE user_id = $1 AND id = $2', values: [u, id] }),
    fts: (u, q) => pool.query({ name: 'fts', text: FTS, values: [u, q] }),
    exec: async (s) => void (await pool.query(s)),
    end: () => pool.end(),
  };
}

function postgresDriver(url: string): Driver {
  const sql = postgres(url, { max: POOL, onnotice: () => {} });
  return {
    name: 'postgres',
    insertValues: async (b) => void (await sql.begin((t) => t`INSERT INTO turns ${t(b as never, ...COLS)} ON CONFLICT DO NOTHING`)),
    insertUnnest: async (b) => void (await sql.begin((t) => t.unsafe(UNNEST, columnsOf(b).map((c) => sql.array(c as never[])) as never[], { prepare: true }))),
    byId: (u, id) => sql`SELECT * FROM turns WHERE user_id = ${u} AND id = ${id}`,
    fts: (u, q) => sql.unsafe(FTS, [u, q], { prepare: true }),
    exec: async (s) => void (await sql.unsafe(s)),
    end: () => sql.end(),
  };
}

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function latencies(n: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number; perSec: number }> {
  const lat: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await fn(i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const total = performance.now() - start;
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), perSec: (n / total) * 1000 };
}

const db = await createDatabase('nc_bench');
const results: Record<string, Record<string, string>> = {};
try {
  for (const make of [pgDriver, postgresDriver, pgDriver, postgresDriver]) {
    const d = make(db.url);
    const r: Record<string, string> = {};
    for (const mode of ['values', 'unnest'] as const) {
      await d.exec(SCHEMA);
      const data = rows(mode);
      const ms = await timeIt(async () => {
        for (let i = 0; i < data.length; i += BATCH) {
          const b = data.slice(i, i + BATCH);
          await (mode === 'values' ? d.insertValues(b) : d.insertUnnest(b));
        }
      });
      r[`insert ${mode} rows/s`] = ((data.length / ms) * 1000).toFixed(0);
    }
    await d.exec('ANALYZE turns');
    const ids = (i: number) => [`u${i % 50}`, `unnest-${(i * 7919) % ROWS}`] as const;
    // warm the prepared statements
    await latencies(200, 1, (i) => d.byId(...ids(i)));
    const seq = await latencies(3000, 1, (i) => d.byId(...ids(i)));
    const par = await latencies(6000, 16, (i) => d.byId(...ids(i)));
    r['by id, 1 in flight p50/p99 ms'] = `${seq.p50.toFixed(3)} / ${seq.p99.toFixed(3)}`;
    r['by id, 16 in flight q/s'] = par.perSec.toFixed(0);
    const queries = ['sister nurse', 'paris coffee', 'what did Dolores say about the piano', 'marathon in berlin'];
    await latencies(50, 1, (i) => d.fts(`u${i % 50}`, queries[i % queries.length]!));
    const fts = await latencies(1000, 1, (i) => d.fts(`u${i % 50}`, queries[i % queries.length]!));
    const ftsPar = await latencies(2000, 8, (i) => d.fts(`u${i % 50}`, queries[i % queries.length]!));
    r['fts p50/p99 ms'] = `${fts.p50.toFixed(3)} / ${fts.p99.toFixed(3)}`;
    r['fts, 8 in flight q/s'] = ftsPar.perSec.toFixed(0);
    await d.end();
    const key = results[d.name] ? `${d.name} (2nd)` : d.name;
    results[key] = r;
    process.stdout.write(`${key}: ${JSON.stringify(r)}\n`);
  }
} finally {
  await db.drop();
}
console.table(results);
