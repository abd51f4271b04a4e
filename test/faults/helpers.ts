/**
 * Shared pieces of the fault suite (test/faults/): real `neuralcleave` processes on a private
 * redis-server and a temp SQLite file, an HTTP client that streams turns and records which got a 202,
 * and the checks that every acknowledged turn is stored exactly once in every tier it belongs to.
 *
 * Every process is spawned from the built CLI (dist/; `npx tsc -p .` first) and tracked by a Fleet,
 * whose `killAll` the test files call from `after`, so no process outlives its file.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { after, before } from 'node:test';
import { signalChild, startCli, stop } from '../helpers/cli.js';
import { startRedis, type RedisHandle } from '../helpers/redis.js';
import { tmpDir } from '../helpers/tmp.js';
import { readDb } from '../helpers/read-db.js';

export { readDb };
export { until } from '../helpers/until.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The configuration every process of one scenario shares, as NEURALCLEAVE_* variables: the durable
 * store is the SQLite file, or the PostgreSQL database when `databaseUrl` is given.
 */
export function faultEnv(o: { sqlitePath?: string; databaseUrl?: string; redisUrl?: string; prefix?: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    ...(o.sqlitePath ? { NEURALCLEAVE_SQLITE_PATH: o.sqlitePath } : {}),
    ...(o.databaseUrl ? { NEURALCLEAVE_DATABASE_URL: o.databaseUrl } : {}),
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'warn',
    NEURALCLEAVE_PORT: '0',
    ...(o.redisUrl ? { NEURALCLEAVE_REDIS_URL: o.redisUrl } : {}),
    ...(o.prefix ? { NEURALCLEAVE_REDIS_PREFIX: o.prefix } : {}),
    // no compaction during these runs: it would rewrite the short-term lists the checks read
    NEURALCLEAVE_CONTEXT_WINDOW: '1000000',
    // a killed worker's jobs come back in seconds, and lost jobs are re-enqueued in seconds
    NEURALCLEAVE_WORKER_LOCK_DURATION_MS: '2000',
    NEURALCLEAVE_WORKER_STALLED_INTERVAL_MS: '1000',
    NEURALCLEAVE_RECONCILE_INTERVAL_S: '1',
    NEURALCLEAVE_RECONCILE_AFTER_S: '2',
    ...o.extra,
  };
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  /** a process group (serve with its HTTP processes): signals go to all of it */
  group?: boolean;
}

/**
 * How many HTTP processes every `serve` of the suite runs (`serve --processes N`): 2 unless
 * FAULT_SERVE_PROCESSES says otherwise (1: the one-process shape).
 */
export const SERVE_PROCESSES = process.env.FAULT_SERVE_PROCESSES ?? '2';

/** Sends `signal` to the process, or to its whole group. */
export function signal(p: Proc, sig: NodeJS.Signals): void {
  signalChild(p.child, sig, p.group);
}

/** Every process a test file starts; `killAll` in `after` leaves none behind. */
export class Fleet {
  readonly children = new Set<ChildProcess>();
  private readonly groups = new Set<ChildProcess>();

  /** `cwd`: the process's working folder (the test's own by default) */
  async serve(env: Record<string, string>, cwd?: string): Promise<Proc & { base: string }> {
    const p = await startCli(['serve', '--processes', SERVE_PROCESSES], env, /listening on (http:\/\/\S+)/, 60_000, {
      group: true,
      cwd,
      spawned: (c) => {
        this.children.add(c);
        this.groups.add(c);
      },
    });
    return { child: p.child, output: p.output, base: p.match[1]!, group: true };
  }

  async worker(env: Record<string, string>, args: string[] = ['--queues', 'embed,persist', '--concurrency', '8'], cwd?: string): Promise<Proc> {
    // tracked from its spawn: when one of several workers started together fails, `after` still reaches the others
    const p = await startCli(['worker', ...args], env, /worker ready/, 60_000, { cwd, spawned: (c) => this.children.add(c) });
    return { child: p.child, output: p.output };
  }

  track(child: ChildProcess): void {
    this.children.add(child);
  }

  killAll(): void {
    for (const c of this.children) signal({ child: c, output: () => '', group: this.groups.has(c) }, 'SIGKILL');
  }
}

/** SIGKILL, to the whole group of a `serve --processes N`: the service crashes at once. */
export async function kill(p: Proc): Promise<void> {
  if (!p.group) return void (await stop(p.child, 'SIGKILL'));
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.child.once('exit', () => resolve()));
  signal(p, 'SIGKILL');
  await exited;
}

/**
 * Freezes the processes (SIGSTOP) at a moment `cond` holds, so that a kill that follows lands in that
 * state; between checks they run for a few milliseconds at a time. Throws after `tries` attempts.
 */
export async function freezeWhen(procs: readonly Proc[], cond: () => boolean | Promise<boolean>, what: string, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    for (const p of procs) signal(p, 'SIGSTOP');
    if (await cond()) return;
    for (const p of procs) signal(p, 'SIGCONT');
    await sleep(5);
  }
  throw new Error(`never saw ${what}`);
}


// ---------------------------------------------------------------------------------------------------
// HTTP

export interface Reply {
  status: number;
  text: string;
  json: any;
}

/**
 * One request over a fresh connection, with the path and body sent exactly as given (no URL
 * normalization of `../`, raw bytes allowed). Rejects on a connection error.
 */
export function rawRequest(base: string, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent: false,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export async function postJson(base: string, path: string, value: unknown): Promise<Reply> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

// ---------------------------------------------------------------------------------------------------
// turns

export interface StreamTurn {
  id: string;
  user_id: string;
  role: 'user' | 'assistant';
  content: string;
  importance: number;
}

/** Whether a turn belongs in the long-term tier (importance_threshold 0.3, the default). */
export const isImportant = (t: { importance: number }) => t.importance >= 0.3;

/**
 * The i-th turn of a run: distinct text, an id the client chooses (its idempotency key), every other
 * turn important (stored long-term) and the rest not (turn log, short-term and vector only).
 */
export function streamTurn(tag: string, i: number): StreamTurn {
  return {
    id: `${tag}-${i}`,
    user_id: `u${i % 5}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${tag} turn ${i}: the courier brings parcel ${i * 7919} to dock ${i % 13} on day ${i % 31}`,
    importance: i % 2 === 0 ? 0.9 : 0.1,
  };
}

export interface StreamRequest {
  session: string;
  turns: StreamTurn[];
}

/**
 * Streams `POST /sessions/:id/turns` with `concurrency` requests in flight (1–3 turns each) until
 * stopped or until the server stops answering. Records the ids of every 202 and the requests that got
 * no answer (in flight when the server died), which a client would retry.
 */
export class TurnStream {
  readonly acknowledged = new Set<string>();
  readonly unanswered: StreamRequest[] = [];
  readonly sent = new Map<string, StreamTurn & { session: string }>();
  readonly errors: string[] = [];
  private next = 0;
  private requests = 0;
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly base: string,
    private readonly tag: string,
    concurrency = 8,
    private readonly sessions = 200,
  ) {
    this.loops = Array.from({ length: concurrency }, () => this.loop());
  }

  private take(): StreamRequest {
    // 1–3 turns per request, in one session; sessions rotate so that each holds fewer turns than
    // short_term_max_turns and every turn stays in its session's short-term list
    const session = `${this.tag}-s${this.requests++ % this.sessions}`;
    const turns = Array.from({ length: 1 + (this.requests % 3) }, () => streamTurn(this.tag, this.next++));
    for (const t of turns) this.sent.set(t.id, { ...t, session });
    return { session, turns };
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const req = this.take();
      let reply: Reply;
      try {
        reply = await rawRequest(this.base, 'POST', `/sessions/${encodeURIComponent(req.session)}/turns`, JSON.stringify({ turns: req.turns }));
      } catch {
        // the server died with this request in flight: it may or may not be durable
        this.unanswered.push(req);
        this.running = false;
        return;
      }
      if (reply.status === 202) for (const t of req.turns) this.acknowledged.add(t.id);
      else {
        this.errors.push(`${reply.status} ${reply.text.slice(0, 200)}`);
        this.unanswered.push(req);
      }
    }
  }

  /** stops sending and waits for the requests in flight */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** resolves when every loop has ended (the server died, or stop()) */
  done(): Promise<void> {
    return Promise.all(this.loops).then(() => undefined);
  }
}

/** Retries requests that got no answer, as a client would after a crash (same ids: stored once). */
export async function retry(base: string, requests: readonly StreamRequest[]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const r of requests) {
    const reply = await rawRequest(base, 'POST', `/sessions/${encodeURIComponent(r.session)}/turns`, JSON.stringify({ turns: r.turns }));
    assert.equal(reply.status, 202, reply.text);
    for (const t of r.turns) ids.add(t.id);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------------
// the store


export function count(dbPath: string, sql: string): number {
  try {
    return readDb(dbPath, (db) => (db.prepare(sql).get() as { n: number }).n);
  } catch {
    return 0; // the file or table does not exist yet
  }
}

export const turnsIn = (dbPath: string) => count(dbPath, 'SELECT count(*) AS n FROM turns');
export const pendingIn = (dbPath: string) => count(dbPath, 'SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL');
export const processedIn = (dbPath: string) => count(dbPath, 'SELECT count(*) AS n FROM turns WHERE embedded_with IS NOT NULL AND persisted_at IS NOT NULL');

export function turnIds(dbPath: string): Set<string> {
  return readDb(dbPath, (db) => new Set((db.prepare('SELECT id FROM turns').all() as Array<{ id: string }>).map((r) => r.id)));
}

/** what a turn's first write reached: turn log + short-term + the queues */
export interface Expected {
  id: string;
  user_id: string;
  session: string;
  importance: number;
}

/**
 * Every expected turn is stored exactly once in every tier it belongs to — the turn log, one vector,
 * one long-term entry when it is important (and none when not), once in its session's short-term list
 * when `shortTerm` is given — all of its jobs are done, and nothing else is stored: no turn, vector or
 * entry that is not one of them (nothing half-written for a turn that was not acknowledged).
 *
 * The short-term tier is not durable (docs/architecture.md, write path: a turn acknowledged while Redis is away is only in the
 * turn log), so `shortTerm.exempt` names turns that may be absent from it — never twice, though.
 */
export async function assertStoredOnce(
  dbPath: string,
  expected: ReadonlyMap<string, Expected>,
  shortTerm?: { url: string; prefix: string; exempt?: ReadonlySet<string> },
): Promise<void> {
  readDb(dbPath, (db) => {
    db.exec('CREATE TEMP TABLE expected (id TEXT PRIMARY KEY, important INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO expected (id, important) VALUES (?, ?)');
    db.transaction(() => expected.forEach((t) => insert.run(t.id, isImportant(t) ? 1 : 0)))();
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const some = (sql: string) => (db.prepare(sql).all() as Array<{ id: string }>).map((r) => r.id).slice(0, 5);
    const n = expected.size;
    assert.deepEqual(some('SELECT id FROM expected WHERE id NOT IN (SELECT id FROM turns)'), [], 'no acknowledged turn missing from the turn log');
    assert.deepEqual(some('SELECT id FROM turns WHERE id NOT IN (SELECT id FROM expected)'), [], 'no turn in the log that was not acknowledged (or retried)');
    assert.equal(one('SELECT count(*) AS n FROM turns'), n, 'the turn log holds exactly these turns');
    assert.deepEqual(some('SELECT id FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL'), [], 'no turn left unprocessed');
    assert.equal(one('SELECT count(*) AS n FROM vectors'), n, 'one vector per turn');
    assert.equal(one('SELECT count(DISTINCT id) AS n FROM vectors'), n, 'no turn embedded twice');
    assert.deepEqual(some('SELECT id FROM vectors WHERE id NOT IN (SELECT id FROM turns)'), [], 'no vector without its turn-log row');
    assert.deepEqual(some("SELECT id FROM entries WHERE kind = 'turn' AND id NOT IN (SELECT id FROM turns)"), [], 'no long-term entry without its turn-log row');
    assert.deepEqual(some("SELECT id FROM expected WHERE important = 1 AND id NOT IN (SELECT id FROM entries WHERE kind = 'turn')"), [], 'every important turn stored long-term');
    assert.deepEqual(some("SELECT id FROM expected WHERE important = 0 AND id IN (SELECT id FROM entries)"), [], 'no unimportant turn stored long-term');
    assert.equal(one("SELECT count(*) AS n FROM entries WHERE kind = 'turn'"), one('SELECT count(*) AS n FROM expected WHERE important = 1'), 'one entry per important turn');
    assert.equal(one('SELECT count(*) AS n FROM entries_fts'), one('SELECT count(*) AS n FROM entries'), 'the full-text index matches the entries');
  });
  if (shortTerm) await assertShortTermOnce(expected, shortTerm);
}

/**
 * Every expected turn is once in its session's short-term list in Redis (`exempt`: may be absent,
 * never twice), and the lists hold nothing else.
 */
export async function assertShortTermOnce(
  expected: ReadonlyMap<string, Expected>,
  shortTerm: { url: string; prefix: string; exempt?: ReadonlySet<string> },
): Promise<void> {
  const redis = new Redis(shortTerm.url, { maxRetriesPerRequest: 1 });
  try {
    const keys = new RedisKeys(shortTerm.prefix);
    const bySession = new Map<string, Expected[]>();
    for (const t of expected.values()) {
      const k = keys.session(t.user_id, t.session);
      bySession.set(k, [...(bySession.get(k) ?? []), t]);
    }
    const missing: string[] = [];
    const doubled: string[] = [];
    for (const [key, turns] of bySession) {
      const held = (await redis.lrange(key, 0, -1)).map((el) => JSON.parse(el.slice(el.indexOf(' ') + 1)) as { id: string });
      const counts = new Map<string, number>();
      for (const h of held) counts.set(h.id, (counts.get(h.id) ?? 0) + 1);
      for (const t of turns) {
        const c = counts.get(t.id) ?? 0;
        if (c === 0 && !shortTerm.exempt?.has(t.id)) missing.push(t.id);
        if (c > 1) doubled.push(t.id);
      }
      for (const h of held) if (!expected.has(h.id)) missing.push(`unexpected ${h.id}`);
    }
    assert.deepEqual(missing.slice(0, 5), [], 'every acknowledged turn in its session\'s short-term list (and nothing else)');
    assert.deepEqual(doubled.slice(0, 5), [], 'no turn twice in the short-term tier');
  } finally {
    redis.disconnect();
  }
}

/** `PRAGMA integrity_check` and the FTS5 index's own check, on a read-write connection (no process may be writing). */
export function assertIntact(dbPath: string): void {
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    db.prepare("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')").run();
  } finally {
    db.close();
  }
}

export function expectedFrom(stream: TurnStream, ids: Iterable<string>): Map<string, Expected> {
  const out = new Map<string, Expected>();
  for (const id of ids) {
    const t = stream.sent.get(id);
    assert.ok(t, `turn ${id} was sent`);
    out.set(id, { id, user_id: t.user_id, session: t.session, importance: t.importance });
  }
  return out;
}

/** Runs `fn` over the BullMQ queues of one deployment (its Redis prefix), then closes them. */
export async function withQueues<T>(url: string, prefix: string, fn: (queues: Map<string, import('bullmq').Queue>) => Promise<T>, names: readonly string[] = ['embed', 'persist']): Promise<T> {
  const { Queue } = await import('bullmq');
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queues = new Map(names.map((n) => [n, new Queue(n, { connection, prefix: new RedisKeys(prefix).bullPrefix })] as const));
  try {
    return await fn(queues);
  } finally {
    await Promise.all([...queues.values()].map((q) => q.close()));
    connection.disconnect();
  }
}

/** Jobs BullMQ holds as failed in these queues, with their reasons. */
export function failedJobs(url: string, prefix: string): Promise<Array<{ queue: string; id: string; reason: string }>> {
  return withQueues(url, prefix, async (queues) => {
    const out: Array<{ queue: string; id: string; reason: string }> = [];
    for (const [name, q] of queues) for (const job of await q.getFailed(0, -1)) if (job) out.push({ queue: name, id: job.id ?? '', reason: job.failedReason ?? '' });
    return out;
  });
}

/** ids of the jobs BullMQ shows as active (held by some worker, or by a dead one until its lock expires) */
export function activeJobs(url: string, prefix: string): Promise<string[]> {
  return withQueues(url, prefix, async (queues) => (await Promise.all([...queues.values()].map((q) => q.getRanges(['active'], 0, -1)))).flat());
}

/** Writes turns as a JSONL file for `neuralcleave ingest`, each in session `${tag}-s${i % sessions}`. */
export function writeTurnsFile(file: string, tag: string, n: number, sessions = 200): Map<string, Expected> {
  const expected = new Map<string, Expected>();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = streamTurn(tag, i);
    const session = `${tag}-s${i % sessions}`;
    lines.push(JSON.stringify({ ...t, session_id: session }));
    expected.set(t.id, { id: t.id, user_id: t.user_id, session, importance: t.importance });
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return expected;
}

/**
 * One describe block's rig: a temp folder, a fleet of CLI processes and a private redis-server, all
 * stopped (hard) when the block's tests end. `redis` is readable once the block's `before` has run.
 */
export function faultRig(prefix: string): { dir: string; fleet: Fleet; readonly redis: RedisHandle } {
  const dir = tmpDir(prefix);
  const fleet = new Fleet();
  let handle: RedisHandle | undefined;
  before(async () => {
    handle = await startRedis();
  });
  after(async () => {
    fleet.killAll();
    await handle?.stop(true);
  });
  return {
    dir,
    fleet,
    get redis() {
      if (!handle) throw new Error('the rig\'s redis-server is not started yet (use it inside a test)');
      return handle;
    },
  };
}
