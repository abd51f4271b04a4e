// HTTP retrieve throughput and latency: POST /memory/retrieve at 16 concurrent connections (autocannon)
// against a store of 100k turns, beside the in-process retrieve (Memory.retrieve, same data, same
// queries, same server process) measured in the same run.
//
// The server runs in a child process (this same file, forked), so autocannon's client work does not
// share the server's event loop; on these 2-core machines client and server still share the cores.
// Three rounds of (in-process pass with 16 in flight, 8 s of autocannon), medians reported.
// Seeding: 100k generated chat turns (deterministic PRNG) over 200 users with 1–20 sessions each and
// 10–80 turns per session, spread over the last 120 days. They are written straight into the stores in
// batched transactions — turn log (marked embedded and persisted), long-term entries for the turns the
// importance heuristic keeps, vectors from the `hash` embedder, short-term sessions — instead of
// through the queue, which would take minutes; the resulting state is what the queue would leave.
// The server is configured with an admin API key, so every request pays for authentication.
// Then the same over `neuralcleave serve --processes 2` (node:cluster: two HTTP processes, the jobs in
// the primary) on the same file; and single-turn writes (POST /sessions/:id/turns, one turn per
// request, 20 connections) against both shapes. The raw limit of the HTTP rows: a bare node:http
// server in another process that parses each JSON body and answers a small JSON object — the floor of
// any HTTP service on this machine, same bodies, same connections.
// Takes: --quick (20k turns, one short round). Adds rows to the report.
import { byUser } from '../../src/domain/refs.js';
import { mulberry32 } from '../../test/fixtures/random.js';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pino from 'pino';
import { createApi } from '../../src/api/app.js';
import { wire, type Services } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';
import { scoreImportance } from '../../src/domain/importance.js';
import type { Role, Turn } from '../../src/domain/turn.js';
import { Memory } from '../../src/memory/memory.js';
import { percentile, type Report, type Section } from '../report.js';
import { sqliteOf } from '../sqlite.js';

const CONNECTIONS = 16;
const WRITE_CONNECTIONS = 20;
const CLUSTER_PROCESSES = 2;
const CHILD_ENV = 'NC_BENCH_HTTP_CHILD';
/** the admin key every bench server is configured with (and `cannon` sends) */
export const KEY = 'bench-admin-key-0123456789abcdef';

/** The services a bench process measures: a SQLite file in `dir`, the hash embedder, the admin key. */
export async function benchServices(dir: string): Promise<{ services: Services; memory: Memory }> {
  const config = parseConfig({
    sqlite_path: join(dir, 'bench.db'),
    embedding_model: 'hash',
    log_level: 'silent',
    api_keys: [{ key: KEY, users: ['*'] }],
    // a long-term tier of 100k rows, or of long real texts, can exceed the default 300 ms budget on a
    // loaded machine; the figure wanted is the cost of a full pass, not of a pass cut short
    short_term_budget_ms: 5000,
    semantic_budget_ms: 5000,
    long_term_budget_ms: 5000,
  });
  const services = await wire(config, { logger: pino({ level: 'silent' }), reconcile: false });
  return { services, memory: new Memory(services) };
}

interface ChildArgs {
  dir: string;
  turns: number;
  queries: number;
}
/** one pass of Memory.retrieve over the queries, 16 in flight: what the HTTP figures are set against */
interface InProcessRound {
  type: 'round';
  /** retrieves/s */
  rate: number;
  p50: number;
  p99: number;
}
interface Ready {
  type: 'ready';
  port: number;
  /** the bare node:http JSON server (the floor) */
  floorPort: number;
  bodies: string[];
  seeded: { turns: number; entries: number; vectors: number; users: number; sessions: number; ms: number };
  /** one retrieve at a time */
  sequential: { p50: number; p99: number };
}

// ---------------------------------------------------------------------------------------------------
// data: realistic chat turns from templates, deterministic

const prng = mulberry32;

const W = {
  name: ['Ana', 'Clara', 'Tomás', 'Yuki', 'Omar', 'Lena', 'Priya', 'Jonas', 'Mei', 'Rafael', 'Sofia', 'Kwame', 'Ingrid', 'Mateo', 'Aisha', 'Nils'],
  relation: ['sister', 'brother', 'mother', 'father', 'colleague', 'neighbour', 'friend', 'manager', 'cousin', 'partner', 'landlord', 'dentist'],
  city: ['Lisbon', 'Berlin', 'Osaka', 'Nairobi', 'Toronto', 'Valparaíso', 'Kraków', 'Hanoi', 'Porto', 'Montreal', 'Bergen', 'Seville'],
  food: ['ramen', 'falafel', 'sourdough bread', 'green curry', 'pierogi', 'tacos al pastor', 'miso soup', 'lentil stew', 'dark chocolate', 'oat milk latte'],
  hobby: ['bouldering', 'sailing', 'watercolour painting', 'chess', 'trail running', 'playing the cello', 'birdwatching', 'pottery', 'salsa dancing', 'gardening'],
  topic: ['the quarterly budget', 'a kubernetes migration', 'my thesis draft', 'the wedding seating plan', 'tax deductions', 'a job interview', 'the kitchen renovation', 'learning Portuguese', 'a marathon training plan', 'the product launch'],
  day: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'tomorrow', 'next week', 'the 14th'],
  event: ['dentist appointment', 'team offsite', 'flight', 'birthday dinner', 'piano recital', 'visa interview', 'parent-teacher meeting', 'code review', 'yoga class', 'car inspection'],
  hour: ['8:30', '9:15', '10:00', '11:45', '13:30', '15:00', '16:20', '18:00', '19:30'],
  thing: ['bike', 'laptop', 'passport', 'guitar', 'camera', 'apartment', 'garden', 'car', 'phone', 'running shoes'],
};
type Slots = typeof W;
const USER_TEMPLATES: Array<(p: (k: keyof Slots) => string) => string> = [
  (p) => `I moved to ${p('city')} last year and I still miss ${p('food')} from home.`,
  (p) => `My ${p('relation')} ${p('name')} is visiting on ${p('day')}, can you help me plan something?`,
  (p) => `Remember that I am allergic to ${p('food')}.`,
  (p) => `I have a ${p('event')} on ${p('day')} at ${p('hour')}.`,
  (p) => `What do you think about ${p('topic')}? I need a decision by ${p('day')}.`,
  (p) => `I started ${p('hobby')} a few months ago and I love it.`,
  (p) => `My ${p('thing')} broke again, the repair shop in ${p('city')} wants 120 euros.`,
  (p) => `Can you summarize where we are with ${p('topic')}?`,
  (p) => `${p('name')} recommended ${p('hobby')} to me, is it expensive to start?`,
  () => 'ok thanks',
  () => 'sounds good',
  (p) => `I prefer ${p('food')} over ${p('food')} when we eat out with ${p('name')}.`,
];
const ASSISTANT_TEMPLATES: Array<(p: (k: keyof Slots) => string) => string> = [
  (p) => `Noted: your ${p('event')} is on ${p('day')}. I will remind you the day before.`,
  (p) => `Here is a short plan for ${p('topic')}: list the open questions, agree on an owner for each, then review on ${p('day')}.`,
  (p) => `${p('city')} has good places for ${p('food')}; ask ${p('name')} for the one near the station.`,
  (p) => `For ${p('hobby')}, start with a beginner class and borrow gear before buying any.`,
  (p) => `Sure. Would you like a checklist for ${p('topic')} or a timeline?`,
  () => 'You are welcome!',
  (p) => `Your ${p('relation')} might enjoy ${p('hobby')} too, if you want a shared activity.`,
];

export function generate(totalTurns: number) {
  const rnd = prng(20_240_601);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const p = (k: keyof Slots) => pick(W[k]);
  const now = Date.now();
  const sessions: Array<{ user: string; session: string; turns: Turn[] }> = [];
  let made = 0;
  for (let u = 0; made < totalTurns; u = (u + 1) % 200) {
    const user = `user-${String(u).padStart(3, '0')}`;
    const nSessions = 1 + Math.floor(rnd() * 20);
    for (let s = 0; s < nSessions && made < totalTurns; s++) {
      const session = `${user}-s${sessions.length}`;
      const nTurns = Math.min(totalTurns - made, 10 + Math.floor(rnd() * 71));
      let t = now - Math.floor(rnd() * 120 * 86_400_000);
      const turns: Turn[] = [];
      for (let i = 0; i < nTurns; i++) {
        const role: Role = i % 2 === 0 ? 'user' : 'assistant';
        const content = (role === 'user' ? pick(USER_TEMPLATES) : pick(ASSISTANT_TEMPLATES))(p);
        t += 30_000 + Math.floor(rnd() * 270_000);
        turns.push({
          id: `${session}-t${i}`,
          user_id: user,
          session_id: session,
          role,
          name: role === 'user' && rnd() < 0.2 ? pick(W.name) : null,
          content,
          content_hash: contentHash(content),
          created_at: new Date(t).toISOString(),
          importance: null,
          pinned: rnd() < 0.01,
          metadata: null,
        });
      }
      sessions.push({ user, session, turns });
      made += nTurns;
    }
  }
  return { sessions, pick, p };
}

/** Writes the generated turns straight into every tier, in batched transactions (see the header). */
async function seed(services: Services, totalTurns: number) {
  const { sessions } = generate(totalTurns);
  await seedSessions(services, sessions);
  return { sessions, users: new Set(sessions.map((s) => s.user)).size };
}

/** Writes sessions of turns straight into every tier, as the queue would leave them (see the header). */
export async function seedSessions(services: Services, sessions: ReadonlyArray<{ turns: Turn[] }>): Promise<void> {
  const embedder = (await services.embedders.ready())!;
  const all = sessions.flatMap((s) => s.turns);
  const threshold = services.config.importance_threshold;
  for (let i = 0; i < all.length; i += 2000) {
    const batch = all.slice(i, i + 2000);
    const sq = sqliteOf(services);
    sq.turnLog.appendSync(batch);
    const entries: MemoryEntry[] = [];
    const scored = batch.map((t) => ({ t, importance: scoreImportance(t.content, t.role) }));
    for (const { t, importance } of scored) {
      if (t.pinned || importance >= threshold) {
        entries.push({ ...t, kind: 'turn', importance, covers: null, updated_at: t.created_at });
      }
    }
    sq.longTerm.upsertSync(entries);
    sq.db.transaction(() => scored.forEach(({ t, importance }) => sq.turnLog.markPersistedSync(t.user_id, t.id, importance)))();
    const vectors = await embedder.embed(batch.map((t) => t.content));
    await services.vectors.upsert(
      embedder,
      batch.map((t, j) => ({
        id: t.id,
        vector: vectors[j]!,
        payload: { user_id: t.user_id, session_id: t.session_id, role: t.role, name: t.name, kind: 'turn', content: t.content, content_hash: t.content_hash, created_at: t.created_at },
      })),
    );
    for (const [userId, turns] of byUser(batch)) sq.turnLog.markEmbeddedSync(userId, turns.map((t) => t.id), embedder.id);
  }
  for (const s of sessions) await services.shortTerm.push(s.turns);
}

/** Retrieve requests a chat frontend would send: a question about the user's own memories, in one of their sessions. */
export function queries(sessions: ReturnType<typeof generate>['sessions'], n: number): string[] {
  const rnd = prng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const asks = [
    (k: (x: keyof Slots) => string) => `when is my ${k('event')}?`,
    (k: (x: keyof Slots) => string) => `what food am I allergic to, ${k('food')}?`,
    (k: (x: keyof Slots) => string) => `where did I move, ${k('city')}?`,
    (k: (x: keyof Slots) => string) => `what did ${k('name')} recommend about ${k('hobby')}?`,
    (k: (x: keyof Slots) => string) => `status of ${k('topic')}`,
  ];
  return Array.from({ length: n }, () => {
    const s = pick(sessions);
    return JSON.stringify({ query: pick(asks)((k) => pick(W[k])), user_id: s.user, session_id: s.session, top_k: 8 });
  });
}

// ---------------------------------------------------------------------------------------------------
// child: seed, measure in process, serve

async function child(args: ChildArgs): Promise<void> {
  const { services, memory } = await benchServices(args.dir);
  const started = performance.now();
  const { sessions, users } = await seed(services, args.turns);
  const seededMs = performance.now() - started;
  const bodies = queries(sessions, args.queries);
  const requests = bodies.map((b) => JSON.parse(b) as { query: string; user_id: string; session_id: string; top_k: number });

  // in process: one at a time, over the same queries
  for (const r of requests.slice(0, 50)) await memory.retrieve(r); // warm-up
  const one: number[] = [];
  for (const r of requests) {
    const t0 = performance.now();
    await memory.retrieve(r);
    one.push(performance.now() - t0);
  }
  one.sort((a, b) => a - b);

  /** the same queries, 16 in flight, while the server is idle between two HTTP runs */
  const round = async (): Promise<InProcessRound> => {
    const at16: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < requests.length) {
          const r = requests[next++]!;
          const t0 = performance.now();
          await memory.retrieve(r);
          at16.push(performance.now() - t0);
        }
      }),
    );
    const rate = requests.length / ((performance.now() - started) / 1000);
    at16.sort((a, b) => a - b);
    return { type: 'round', rate, p50: percentile(at16, 50), p99: percentile(at16, 99) };
  };

  // served as `serve` serves it: the hot routes in front of the Express app
  const api = createApi({ memory, services, processMetrics: false });
  const server = await new Promise<Server>((resolve) => {
    const s = createServer(api.listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  const floor = await bareJsonServer();
  const ready: Ready = {
    type: 'ready',
    port: (server.address() as AddressInfo).port,
    floorPort: (floor.address() as AddressInfo).port,
    bodies,
    seeded: {
      turns: (await services.turnLog.counts()).total,
      entries: await services.longTerm.count(),
      vectors: await services.vectors.count(),
      users,
      sessions: sessions.length,
      ms: seededMs,
    },
    sequential: { p50: percentile(one, 50), p99: percentile(one, 99) },
  };
  process.send!(ready);
  for (;;) {
    const msg = await new Promise<{ type: string }>((resolve) => process.once('message', (m) => resolve(m as { type: string })));
    if (msg.type === 'idle') {
      // the jobs of the writes just measured: drained before the next figure
      await services.queue.idle();
      process.send!({ type: 'idle' });
      continue;
    }
    if (msg.type !== 'round') break;
    process.send!(await round());
  }
  for (const srv of [server, floor]) {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
  api.close();
  await services.close();
  process.exit(0);
}

/** The floor: node:http alone, parsing each JSON body and answering a small JSON object. */
function bareJsonServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // a bad body still gets its answer: the floor measures transport, not validation
      }
      const body = JSON.stringify({ ok: true, echoed: typeof parsed, results: [] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

if (process.env[CHILD_ENV]) {
  await child(JSON.parse(process.env[CHILD_ENV]) as ChildArgs);
}

// ---------------------------------------------------------------------------------------------------
// parent: the section

function runCannon(port: number, bodies: string[], seconds: number): Promise<autocannon.Result> {
  let i = 0;
  return cannon(port, CONNECTIONS, seconds, '/memory/retrieve', () => bodies[i++ % bodies.length]!);
}

/** single-turn writes: every request one new turn, spread over 50 users and 200 sessions */
export function runWrites(port: number, seconds: number, tag: string): Promise<autocannon.Result> {
  let i = 0;
  const rnd = prng(11);
  const sessions = Array.from({ length: 200 }, (_, k) => `w${tag}-s${k}`);
  return cannon(port, WRITE_CONNECTIONS, seconds, (k) => `/sessions/${sessions[k % 200]}/turns`, () => {
    const k = i++;
    return JSON.stringify({ user_id: `w-${k % 50}`, role: k % 2 ? 'assistant' : 'user', content: `write ${tag}-${k}: my locker code is ${Math.floor(rnd() * 1e6)} near gate ${k % 40}` });
  });
}

export function cannon(
  port: number,
  connections: number,
  seconds: number,
  path: string | ((k: number) => string),
  body: () => string,
): Promise<autocannon.Result> {
  let n = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        requests: [
          {
            method: 'POST',
            path: typeof path === 'string' ? path : '/',
            setupRequest: (req) => {
              const k = n++;
              return { ...req, ...(typeof path === 'string' ? {} : { path: path(k) }), body: body() };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

/** The port a spawned `serve` (stderr piped) says it listens on; rejects when it exits first or takes over 120 s. */
export function listeningPort(proc: ChildProcess, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} not listening after 120 s:\n${out}`)), 120_000);
    proc.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(/listening on http:\/\/[^:]+:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${out}`));
    });
  });
}

/** The environment of a `serve` on the seeded file in `dir` (hash embedder, the bench's key, generous tier budgets). */
export function clusterEnv(dir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NEURALCLEAVE_SQLITE_PATH: join(dir, 'bench.db'),
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'error',
    NEURALCLEAVE_PORT: '0',
    NEURALCLEAVE_API_KEYS: `${KEY}=*`,
    NEURALCLEAVE_SHORT_TERM_BUDGET_MS: '5000',
    NEURALCLEAVE_SEMANTIC_BUDGET_MS: '5000',
    NEURALCLEAVE_LONG_TERM_BUDGET_MS: '5000',
  };
}

/** `neuralcleave serve --processes N` on the seeded file (no Redis: the primary holds queue and short-term tier). */
export async function startCluster(dir: string, processes: number, settings: Record<string, string> = {}): Promise<{ proc: ChildProcess; port: number }> {
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const env = { ...clusterEnv(dir), ...settings };
  const proc = spawn(process.execPath, [cli, 'serve', '--processes', String(processes)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await listeningPort(proc, `serve --processes ${processes}`);
  return { proc, port };
}

function rates(r: autocannon.Result): { rate: number; p50: number; p99: number; failures: number } {
  return { rate: r['2xx'] / r.duration, p50: r.latency.p50, p99: r.latency.p99, failures: r.non2xx + r.errors };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const section: Section = async (report: Report, { quick }) => {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-http-'));
  const args: ChildArgs = { dir, turns: quick ? 20_000 : 100_000, queries: quick ? 200 : 400 };
  // rounds of (in-process pass, HTTP run), medians taken: the load of these shared machines drifts
  // during a run and must weigh on both sides alike
  const rounds = quick ? 1 : 3;
  const seconds = quick ? 4 : 8;
  let proc: ChildProcess | undefined;
  try {
    proc = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, [CHILD_ENV]: JSON.stringify(args) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const child = proc;
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench server exited early with code ${code}`))));
    exited.catch(() => undefined);
    const next = <T>() => Promise.race([new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T))), exited]);
    const ready = await next<Ready>();
    const s = ready.seeded;
    process.stdout.write(
      `seeded ${s.turns} turns (${s.users} users, ${s.sessions} sessions): ${s.entries} long-term entries, ${s.vectors} vectors, in ${(s.ms / 1000).toFixed(1)} s\n`,
    );
    await runCannon(ready.port, ready.bodies, 2); // warm-up: JIT, connections, page cache
    const inProcess: InProcessRound[] = [];
    const http: Array<{ rate: number; p50: number; p99: number; failures: number }> = [];
    for (let i = 0; i < rounds; i++) {
      child.send({ type: 'round' });
      inProcess.push(await next<InProcessRound>());
      const r = await runCannon(ready.port, ready.bodies, seconds);
      http.push({ rate: r['2xx'] / r.duration, p50: r.latency.p50, p99: r.latency.p99, failures: r.non2xx + r.errors });
    }
    // the floor, with the retrieve bodies and connections, then with the write bodies and connections
    const floorRead = rates(await runCannon(ready.floorPort, ready.bodies, seconds));
    const floorWrite = rates(await runWrites(ready.floorPort, seconds, 'floor'));
    const write1 = rates(await runWrites(ready.port, seconds, 'one'));
    child.send({ type: 'idle' });
    await next<{ type: 'idle' }>();
    child.send({ type: 'stop' });
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    proc = undefined;

    // the same file behind serve --processes N
    const cluster = await startCluster(dir, CLUSTER_PROCESSES);
    proc = cluster.proc;
    await runCannon(cluster.port, ready.bodies, 2);
    const clusterRuns: Array<ReturnType<typeof rates>> = [];
    for (let i = 0; i < rounds; i++) clusterRuns.push(rates(await runCannon(cluster.port, ready.bodies, seconds)));
    const writeN = rates(await runWrites(cluster.port, seconds, 'cluster'));
    const stopped = new Promise<void>((resolve) => cluster.proc.once('exit', () => resolve()));
    cluster.proc.kill('SIGTERM');
    await stopped;
    proc = undefined;

    const ip = { rate: median(inProcess.map((x) => x.rate)), p50: median(inProcess.map((x) => x.p50)), p99: median(inProcess.map((x) => x.p99)) };
    const hp = { rate: median(http.map((x) => x.rate)), p50: median(http.map((x) => x.p50)), p99: median(http.map((x) => x.p99)) };
    const failures = http.reduce((n, x) => n + x.failures, 0);
    const data = `${s.turns.toLocaleString('en-US')} turns, ${CONNECTIONS} connections, median of ${rounds}`;
    const baselineLabel = 'Memory.retrieve in process, 16 in flight';
    report.add({
      section: 'http',
      metric: 'POST /memory/retrieve throughput, one process',
      value: hp.rate,
      unit: 'req/s',
      baseline: ip.rate,
      baselineLabel,
      ratio: hp.rate / ip.rate,
      note: failures > 0 ? `${data}; ${failures} non-2xx or errors` : data,
    });
    // autocannon's latency histogram has 1 ms resolution
    report.add({ section: 'http', metric: 'POST /memory/retrieve p50', value: hp.p50, unit: 'ms', baseline: ip.p50, baselineLabel, ratio: ip.p50 / Math.max(hp.p50, 0.001), note: data });
    report.add({ section: 'http', metric: 'POST /memory/retrieve p99', value: hp.p99, unit: 'ms', baseline: ip.p99, baselineLabel, ratio: ip.p99 / Math.max(hp.p99, 0.001), note: data });
    const cp = { rate: median(clusterRuns.map((x) => x.rate)), p50: median(clusterRuns.map((x) => x.p50)), p99: median(clusterRuns.map((x) => x.p99)) };
    const clusterFailures = clusterRuns.reduce((n, x) => n + x.failures, 0);
    const floorLabel = `bare node:http JSON server, same bodies, ${CONNECTIONS} connections`;
    report.add({
      section: 'http', metric: 'bare node:http JSON server (the HTTP floor)', value: floorRead.rate, unit: 'req/s',
      note: `parses each retrieve body, answers a small JSON object; p50 ${floorRead.p50} ms, p99 ${floorRead.p99} ms; ${CONNECTIONS} connections; with the write bodies at ${WRITE_CONNECTIONS} connections: ${Math.round(floorWrite.rate)} req/s`,
    });
    const met = cp.rate >= 1000 && cp.p99 <= 50;
    report.add({
      section: 'http', metric: `POST /memory/retrieve throughput, serve --processes ${CLUSTER_PROCESSES}`, value: cp.rate, unit: 'req/s',
      baseline: floorRead.rate, baselineLabel: floorLabel, ratio: cp.rate / floorRead.rate, target: '≥ 1,000 req/s with p99 ≤ 50 ms', met,
      note: `${data}; p50 ${cp.p50} ms, p99 ${cp.p99} ms; one process: ${Math.round(hp.rate)} req/s (×${(cp.rate / hp.rate).toFixed(2)}); the seeded short-term sessions are not in the cluster's (fresh) short-term tier${clusterFailures ? `; ${clusterFailures} non-2xx or errors` : ''}`,
    });
    report.add({
      section: 'http', metric: 'single-turn POST /sessions/:id/turns, one process', value: write1.rate, unit: 'turns/s',
      baseline: floorWrite.rate, baselineLabel: `bare node:http JSON server, same bodies, ${WRITE_CONNECTIONS} connections`, ratio: write1.rate / floorWrite.rate,
      note: `one turn per request, ${WRITE_CONNECTIONS} connections, ${seconds} s; p50 ${write1.p50} ms, p99 ${write1.p99} ms; turn-log appends group-committed, jobs running in the same process${write1.failures ? `; ${write1.failures} non-2xx or errors` : ''}`,
    });
    report.add({
      section: 'http', metric: `single-turn POST /sessions/:id/turns, serve --processes ${CLUSTER_PROCESSES}`, value: writeN.rate, unit: 'turns/s',
      baseline: floorWrite.rate, baselineLabel: `bare node:http JSON server, same bodies, ${WRITE_CONNECTIONS} connections`, ratio: writeN.rate / floorWrite.rate,
      target: '≥ 3,000 turns/s', met: writeN.rate >= 3000,
      note: `one turn per request, ${WRITE_CONNECTIONS} connections, ${seconds} s; p50 ${writeN.p50} ms, p99 ${writeN.p99} ms; the jobs run in the primary${writeN.failures ? `; ${writeN.failures} non-2xx or errors` : ''}`,
    });
    const seq = `${s.turns.toLocaleString('en-US')} turns, ${args.queries} queries`;
    report.add({ section: 'http', metric: 'in-process retrieve p50, one at a time', value: ready.sequential.p50, unit: 'ms', note: seq });
    report.add({ section: 'http', metric: 'in-process retrieve p99, one at a time', value: ready.sequential.p99, unit: 'ms', note: seq });
  } finally {
    if (proc) proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
};

export default section;
