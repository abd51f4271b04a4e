// Sustained load against real processes: `neuralcleave serve` plus two `neuralcleave worker`
// processes on a private redis-server (started and stopped here, loopback only) and a temp SQLite
// file, with the `hash` embedder. Writers stream `POST /sessions/:id/turns` and readers call
// `POST /memory/retrieve` at the same time, for a warm-up and then `--seconds` of measurement; then
// the writes stop and the queues drain. The run stops by itself.
//
// Takes: --seconds N (measured window, default 60), --warmup N (default 10), --writers N (requests in
// flight, default 8), --readers N (default 4), --rate N (turns/s to offer, default 0 = as fast as the
// writers go). Needs the build (`npm run load` builds first) and redis-server on the PATH.
// Returns: bench/out/load.md (figures and the command), bench/out/load.svg (latency and queue depth
// over time) and bench/out/load.png when ImageMagick's `convert` is present. Exit 1 when serve's
// memory grew beyond the bound after the warm-up: the peak RSS of the last third of the window may
// exceed the peak of the first third by less than 20% or 50 MB (peaks, because a garbage-collected
// heap saws up and down; a leak lifts the ceiling).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

// ---------------------------------------------------------------------------------------------------
// options and places

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) {
    process.stderr.write(`--${name} needs a number, got "${process.argv[i + 1] ?? ''}"\n`);
    process.exit(2);
  }
  return v;
}

const SECONDS = option('seconds', 60);
const WARMUP = option('warmup', 10);
const WRITERS = option('writers', 8);
const READERS = option('readers', 4);
const RATE = option('rate', 0);
/** the bound on serve's memory after the warm-up */
const RSS_GROWTH_SHARE = 0.2;
const RSS_GROWTH_BYTES = 50 * 1024 * 1024;
const DRAIN_LIMIT_MS = 180_000;

// dist/bench/load.js when built, bench/load.ts under tsx: the repository root either way
const ROOT = fileURLToPath(new URL(import.meta.url.includes('/dist/bench/') ? '../../' : '../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const OUT = join(ROOT, 'bench/out');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// processes

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Spawns a process and resolves once its output matches `ready`. */
function start(cmd: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${cmd} ${args.join(' ')} not ready after 60 s:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.length > 100_000) out = out.slice(-50_000);
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/** resident set size of a process, bytes (Linux) */
function rss(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : NaN;
}

// ---------------------------------------------------------------------------------------------------
// HTTP

const agent = new Agent({ keepAlive: true, maxSockets: WRITERS + READERS + 4 });

function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const url = new URL(path, base);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, agent, headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

// ---------------------------------------------------------------------------------------------------
// the workload

const WORDS = ['courier', 'parcel', 'dock', 'invoice', 'meeting', 'dentist', 'flight', 'garden', 'recipe', 'budget', 'river', 'lantern', 'violin', 'harbour', 'tractor', 'museum'];
const USERS = 20;
const SESSIONS_PER_USER = 25;

function sentence(i: number): string {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length];
  return `turn ${i}: the ${w(0)} and the ${w(1)} near the ${w(2)}, remember ${w(3)} ${i % 97} on day ${i % 28}`;
}

interface Sample {
  /** ms since the measured window began (negative in the warm-up) */
  at: number;
  ms: number;
}

const metrics = {
  windowStart: 0,
  acceptedTurns: 0,
  acceptedRequests: 0,
  writeErrors: new Map<string, number>(),
  readErrors: new Map<string, number>(),
  writes: [] as Sample[],
  reads: [] as Sample[],
  lag: [] as Sample[],
  depth: [] as Array<{ at: number; queued: number; backlog: number }>,
  rss: [] as Array<{ at: number; serve: number; workers: number[] }>,
};

const since = () => performance.now() - metrics.windowStart;
const countError = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

/** the acknowledged turns whose lag is being watched: id → time of the 202 */
const watched = new Map<string, number>();
let lastAcked: { id: string; at: number } | null = null;

async function writer(base: string, k: number, until: () => boolean, pace: () => Promise<void>): Promise<void> {
  for (let n = 0; until(); n++) {
    await pace();
    const i = k * 1_000_000 + n;
    const user = `user-${i % USERS}`;
    const session = `${user}-s${(i >> 3) % SESSIONS_PER_USER}`;
    const turns = Array.from({ length: 1 + (n % 3) }, (_, j) => ({ id: `w${k}-${n}-${j}`, user_id: user, role: j % 2 === 0 ? 'user' : 'assistant', content: sentence(i * 3 + j) }));
    const t0 = performance.now();
    try {
      const r = await call(base, 'POST', `/sessions/${session}/turns`, { turns });
      const ms = performance.now() - t0;
      if (r.status === 202) {
        metrics.writes.push({ at: since(), ms });
        if (metrics.windowStart > 0 && since() >= 0) {
          metrics.acceptedTurns += turns.length;
          metrics.acceptedRequests++;
        }
        lastAcked = { id: turns[0]!.id, at: performance.now() };
      } else countError(metrics.writeErrors, String(r.status));
    } catch (err) {
      countError(metrics.writeErrors, (err as Error).message);
    }
  }
}

async function reader(base: string, k: number, until: () => boolean): Promise<void> {
  for (let n = 0; until(); n++) {
    const i = k * 1_000_000 + n;
    const user = `user-${i % USERS}`;
    const body = { query: `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]} day ${i % 28}`, user_id: user, session_id: `${user}-s${i % SESSIONS_PER_USER}`, top_k: 8 };
    const t0 = performance.now();
    try {
      const r = await call(base, 'POST', '/memory/retrieve', body);
      if (r.status === 200) metrics.reads.push({ at: since(), ms: performance.now() - t0 });
      else countError(metrics.readErrors, String(r.status));
    } catch (err) {
      countError(metrics.readErrors, (err as Error).message);
    }
  }
}

/** An offered rate of `rate` turns/s (2 turns per request on average), shared by the writers; 0: no pacing. */
function pacer(rate: number): () => Promise<void> {
  if (rate <= 0) return async () => {};
  const interval = 1000 / (rate / 2);
  let next = performance.now();
  return async () => {
    next += interval;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  };
}

// ---------------------------------------------------------------------------------------------------
// figures

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** per-second buckets of the measured window: p50/p99 of the samples falling in each */
function buckets(samples: Sample[], seconds: number, bucketS: number): Array<{ t: number; p50: number; p99: number; n: number }> {
  const out = [];
  for (let t = 0; t < seconds; t += bucketS) {
    const inside = samples.filter((s) => s.at >= t * 1000 && s.at < (t + bucketS) * 1000).map((s) => s.ms);
    out.push({ t: t + bucketS / 2, p50: percentile(inside, 50), p99: percentile(inside, 99), n: inside.length });
  }
  return out;
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number) => (Number.isNaN(x) ? '–' : x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);

// ---------------------------------------------------------------------------------------------------
// chart: an SVG drawn by hand (no plotting package)

interface Series {
  name: string;
  colour: string;
  points: Array<{ x: number; y: number }>;
}

function panel(o: { x: number; y: number; w: number; h: number; title: string; yLabel: string; xMax: number; series: Series[]; log?: boolean }): string {
  const ys = o.series.flatMap((s) => s.points.map((p) => p.y)).filter((y) => Number.isFinite(y) && y > 0);
  const yMaxRaw = ys.length ? Math.max(...ys) : 1;
  const yMinRaw = ys.length ? Math.min(...ys) : 1;
  const log = o.log ?? false;
  const lo = log ? 10 ** Math.floor(Math.log10(Math.max(yMinRaw, 0.1))) : 0;
  // linear: headroom above the highest point, so that the legend does not sit on the lines
  const hi = log ? 10 ** Math.ceil(Math.log10(yMaxRaw)) : 4 * niceCeil((yMaxRaw * 1.2) / 4);
  const sx = (x: number) => o.x + (x / o.xMax) * o.w;
  const sy = (y: number) => {
    const f = log ? (Math.log10(Math.max(y, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : y / hi;
    return o.y + o.h - f * o.h;
  };
  const parts: string[] = [];
  parts.push(`<text x="${o.x}" y="${o.y - 8}" font-size="13" font-weight="bold">${o.title}</text>`);
  parts.push(`<rect x="${o.x}" y="${o.y}" width="${o.w}" height="${o.h}" fill="none" stroke="#999"/>`);
  // y ticks
  // log: 1-2-5 in every decade; linear: five steps of a round size
  const ticks = log
    ? Array.from({ length: Math.round(Math.log10(hi / lo)) }, (_, i) => [1, 2, 5].map((m) => m * lo * 10 ** i)).flat().concat(hi)
    : [0, 1, 2, 3, 4].map((k) => k * (hi / 4));
  for (const t of ticks) {
    const y = sy(t);
    parts.push(`<line x1="${o.x}" x2="${o.x + o.w}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`);
    parts.push(`<text x="${o.x - 6}" y="${y + 4}" font-size="11" text-anchor="end">${t >= 1000 ? `${t / 1000}k` : +t.toPrecision(3)}</text>`);
  }
  // x ticks every 10 s
  const step = o.xMax > 120 ? 30 : 10;
  for (let t = 0; t <= o.xMax; t += step) {
    parts.push(`<line x1="${sx(t)}" x2="${sx(t)}" y1="${o.y + o.h}" y2="${o.y + o.h + 4}" stroke="#999"/>`);
    parts.push(`<text x="${sx(t)}" y="${o.y + o.h + 16}" font-size="11" text-anchor="middle">${t}s</text>`);
  }
  parts.push(`<text x="${o.x - 44}" y="${o.y + o.h / 2}" font-size="11" transform="rotate(-90 ${o.x - 44} ${o.y + o.h / 2})" text-anchor="middle">${o.yLabel}</text>`);
  o.series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p.y) && (!log || p.y > 0));
    if (pts.length > 0) parts.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="1.8" points="${pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
    const lx = o.x + 10 + i * 140;
    parts.push(`<line x1="${lx}" x2="${lx + 18}" y1="${o.y + 14}" y2="${o.y + 14}" stroke="${s.colour}" stroke-width="3"/>`);
    parts.push(`<text x="${lx + 22}" y="${o.y + 18}" font-size="11">${s.name}</text>`);
  });
  return parts.join('\n');
}

function niceCeil(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function chart(o: {
  seconds: number;
  reads: ReturnType<typeof buckets>;
  writes: ReturnType<typeof buckets>;
  lag: ReturnType<typeof buckets>;
  depth: typeof metrics.depth;
  rss: typeof metrics.rss;
  title: string;
}): string {
  const W = 860;
  const H = 760;
  const inWindow = <T extends { at: number }>(xs: T[]) => xs.filter((d) => d.at >= 0 && d.at <= o.seconds * 1000);
  const latency = panel({
    x: 70,
    y: 50,
    w: W - 100,
    h: 250,
    title: 'latency per 1-second bucket (log scale)',
    yLabel: 'ms',
    xMax: o.seconds,
    log: true,
    series: [
      { name: 'retrieve p50', colour: '#1f77b4', points: o.reads.map((b) => ({ x: b.t, y: b.p50 })) },
      { name: 'retrieve p99', colour: '#d62728', points: o.reads.map((b) => ({ x: b.t, y: b.p99 })) },
      { name: 'turn write p99', colour: '#2ca02c', points: o.writes.map((b) => ({ x: b.t, y: b.p99 })) },
      { name: 'queue lag p50', colour: '#8c564b', points: o.lag.map((b) => ({ x: b.t, y: b.p50 })) },
    ],
  });
  const depth = panel({
    x: 70,
    y: 360,
    w: W - 100,
    h: 150,
    title: 'queue depth (embed + persist jobs waiting or active) and turn-log backlog',
    yLabel: 'jobs / turns',
    xMax: o.seconds,
    series: [
      { name: 'queued jobs', colour: '#9467bd', points: inWindow(o.depth).map((d) => ({ x: d.at / 1000, y: d.queued })) },
      { name: 'unfinished turns', colour: '#ff7f0e', points: inWindow(o.depth).map((d) => ({ x: d.at / 1000, y: d.backlog })) },
    ],
  });
  const memory = panel({
    x: 70,
    y: 570,
    w: W - 100,
    h: 150,
    title: 'resident memory (RSS)',
    yLabel: 'MB',
    xMax: o.seconds,
    series: [
      { name: 'serve', colour: '#17becf', points: inWindow(o.rss).map((r) => ({ x: r.at / 1000, y: r.serve / 2 ** 20 })) },
      { name: 'worker 1', colour: '#7f7f7f', points: inWindow(o.rss).map((r) => ({ x: r.at / 1000, y: (r.workers[0] ?? NaN) / 2 ** 20 })) },
      { name: 'worker 2', colour: '#bcbd22', points: inWindow(o.rss).map((r) => ({ x: r.at / 1000, y: (r.workers[1] ?? NaN) / 2 ** 20 })) },
    ],
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${W / 2}" y="22" font-size="15" text-anchor="middle" font-weight="bold">${o.title}</text>
${latency}
${depth}
${memory}
</svg>
`;
}

// ---------------------------------------------------------------------------------------------------
// the run

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'nc-load-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'load.db');

  const port = await freePort();
  const redis = await start('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {}, /Ready to accept connections/);
  const env = {
    NEURALCLEAVE_REDIS_URL: `redis://127.0.0.1:${port}`,
    NEURALCLEAVE_SQLITE_PATH: dbPath,
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'warn',
    NEURALCLEAVE_HOST: '127.0.0.1',
    NEURALCLEAVE_PORT: '0',
  };
  const serve = await start(process.execPath, [CLI, 'serve'], env, /listening on (http:\/\/\S+)/);
  const base = serve.match[1]!;
  const workers = await Promise.all([0, 1].map(() => start(process.execPath, [CLI, 'worker', '--queues', 'embed,persist'], env, /worker ready/)));
  process.stdout.write(`serve ${base} (pid ${serve.child.pid}), workers ${workers.map((w) => w.child.pid).join(', ')}, redis :${port}\n`);

  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const doneIn = db.prepare("SELECT id FROM turns WHERE id IN (SELECT value FROM json_each(?)) AND embedded_with IS NOT NULL AND persisted_at IS NOT NULL");
  const backlogQ = db.prepare('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL');

  // measured window: [warm-up end, warm-up end + SECONDS]
  const t0 = performance.now();
  metrics.windowStart = t0 + WARMUP * 1000;
  const windowEnd = metrics.windowStart + SECONDS * 1000;
  const loadOn = () => performance.now() < windowEnd;

  // samplers: queue lag (one acknowledged turn every 250 ms, polled every 50 ms), queue depth and RSS every second
  const lagTimer = setInterval(() => {
    if (lastAcked && !watched.has(lastAcked.id)) watched.set(lastAcked.id, lastAcked.at);
  }, 250);
  const pollTimer = setInterval(() => {
    if (watched.size === 0) return;
    const done = doneIn.all(JSON.stringify([...watched.keys()])) as Array<{ id: string }>;
    const now = performance.now();
    for (const { id } of done) {
      const ackAt = watched.get(id)!;
      watched.delete(id);
      metrics.lag.push({ at: ackAt - metrics.windowStart, ms: now - ackAt });
    }
  }, 50);
  let sampling: Promise<void> = Promise.resolve();
  const sampleTimer = setInterval(() => {
    sampling = (async () => {
      const at = since();
      try {
        const h = await call(base, 'GET', '/health');
        const q = h.json?.queues ?? {};
        const queued = ['embed', 'persist'].reduce((n, name) => n + (q[name]?.waiting ?? 0) + (q[name]?.active ?? 0) + (q[name]?.delayed ?? 0), 0);
        metrics.depth.push({ at, queued, backlog: (backlogQ.get() as { n: number }).n });
        metrics.rss.push({ at, serve: rss(serve.child.pid!), workers: workers.map((w) => rss(w.child.pid!)) });
      } catch {
        // a missed sample
      }
    })();
  }, 1000);

  process.stdout.write(`warm-up ${WARMUP} s, then ${SECONDS} s measured: ${WRITERS} writers${RATE > 0 ? ` offering ${RATE} turns/s` : ''}, ${READERS} readers\n`);
  const pace = pacer(RATE);
  const progress = setInterval(() => {
    const t = since() / 1000;
    const d = metrics.depth[metrics.depth.length - 1];
    process.stdout.write(`  ${t >= 0 ? `t=${t.toFixed(0)}s` : `warm-up ${(-t).toFixed(0)}s left`}: ${metrics.acceptedTurns} turns accepted in the window, backlog ${d?.backlog ?? '?'}\n`);
  }, 10_000);
  await Promise.all([
    ...Array.from({ length: WRITERS }, (_, k) => writer(base, k, loadOn, pace)),
    ...Array.from({ length: READERS }, (_, k) => reader(base, k, loadOn)),
  ]);
  clearInterval(progress);
  const loadEndedAt = performance.now();

  // drain: how long until every accepted turn is embedded and persisted
  let drained = false;
  while (performance.now() - loadEndedAt < DRAIN_LIMIT_MS) {
    if ((backlogQ.get() as { n: number }).n === 0 && watched.size === 0) {
      drained = true;
      break;
    }
    await sleep(100);
  }
  const drainMs = performance.now() - loadEndedAt;
  clearInterval(lagTimer);
  clearInterval(pollTimer);
  clearInterval(sampleTimer);
  await sampling;
  const totals = db.prepare('SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM vectors) AS vectors, (SELECT count(*) FROM entries) AS entries').get() as { turns: number; vectors: number; entries: number };
  db.close();

  await stop(serve.child);
  await Promise.all(workers.map((w) => stop(w.child)));
  await stop(redis.child, 'SIGKILL');

  // ---- figures
  const inWindow = (s: Sample) => s.at >= 0 && s.at < SECONDS * 1000;
  const reads = metrics.reads.filter(inWindow).map((s) => s.ms);
  const writes = metrics.writes.filter(inWindow).map((s) => s.ms);
  const lags = metrics.lag.filter(inWindow).map((s) => s.ms);
  const rssIn = metrics.rss.filter((r) => r.at >= 0 && r.at <= SECONDS * 1000 + 1000);
  // the verdict compares the ceilings of the first and last thirds: the heap saws between collections,
  // so one sample at the start and one at the end could land anywhere between trough and peak
  const third = (SECONDS * 1000) / 3;
  const rssStart = rssIn[0]?.serve ?? NaN;
  const rssEnd = rssIn[rssIn.length - 1]?.serve ?? NaN;
  const peakEarly = Math.max(...rssIn.filter((r) => r.at < third).map((r) => r.serve));
  const peakLate = Math.max(...rssIn.filter((r) => r.at >= 2 * third).map((r) => r.serve));
  const growth = peakLate - peakEarly;
  const withinBound = growth < RSS_GROWTH_BYTES || growth < peakEarly * RSS_GROWTH_SHARE;
  const depthIn = metrics.depth.filter((d) => d.at >= 0 && d.at <= SECONDS * 1000);
  const maxQueued = Math.max(0, ...depthIn.map((d) => d.queued));
  const maxBacklog = Math.max(0, ...depthIn.map((d) => d.backlog));
  const workersRssStart = rssIn[0]?.workers ?? [];
  const workersRss = rssIn[rssIn.length - 1]?.workers ?? [];
  const errors = (m: Map<string, number>) => (m.size === 0 ? 'none' : [...m].map(([k, v]) => `${v} × ${k}`).join(', '));

  const command = `npm run load -- --seconds ${SECONDS}${WARMUP !== 10 ? ` --warmup ${WARMUP}` : ''}${WRITERS !== 8 ? ` --writers ${WRITERS}` : ''}${READERS !== 4 ? ` --readers ${READERS}` : ''}${RATE > 0 ? ` --rate ${RATE}` : ''}`;
  const rows: Array<[string, string]> = [
    ['accepted turn writes', `${(metrics.acceptedTurns / SECONDS).toFixed(0)} turns/s (${(metrics.acceptedRequests / SECONDS).toFixed(0)} requests/s of 1–3 turns, ${WRITERS} in flight${RATE > 0 ? `, ${RATE} turns/s offered` : ', as fast as accepted'})`],
    ['turn write latency (202)', `p50 ${ms(percentile(writes, 50))}, p99 ${ms(percentile(writes, 99))}`],
    ['retrieve latency', `p50 ${ms(percentile(reads, 50))}, p99 ${ms(percentile(reads, 99))} (${(reads.length / SECONDS).toFixed(0)} retrieves/s, ${READERS} in flight)`],
    ['queue lag (202 → embedded and persisted)', `p50 ${ms(percentile(lags, 50))}, p99 ${ms(percentile(lags, 99))}, max ${ms(Math.max(...lags))} (${lags.length} sampled turns, polled every 50 ms)`],
    ['queue depth in the window', `max ${maxQueued} jobs queued, max ${maxBacklog} unfinished turns in the turn log`],
    ['drain after the load stopped', drained ? `${(drainMs / 1000).toFixed(1)} s until every turn was embedded and persisted` : `not drained after ${DRAIN_LIMIT_MS / 1000} s`],
    ['serve RSS after warm-up → end', `${mb(rssStart)} → ${mb(rssEnd)}; peak ${mb(peakEarly)} in the first third of the window, ${mb(peakLate)} in the last (${growth >= 0 ? '+' : ''}${mb(growth)}, ${((growth / peakEarly) * 100).toFixed(1)}%)`],
    ['memory bound', `peak RSS of the last third < peak of the first third + ${RSS_GROWTH_SHARE * 100}% or + ${mb(RSS_GROWTH_BYTES)}: ${withinBound ? 'MET' : 'NOT MET'}`],
    ['worker RSS after warm-up → end', workersRss.map((end, i) => `${mb(workersRssStart[i] ?? NaN)} → ${mb(end)}`).join(', ')],
    ['errors', `writes: ${errors(metrics.writeErrors)}; retrieves: ${errors(metrics.readErrors)}`],
    ['stored at the end', `${totals.turns} turns, ${totals.vectors} vectors, ${totals.entries} long-term entries`],
  ];

  mkdirSync(OUT, { recursive: true });
  const svg = chart({
    seconds: SECONDS,
    reads: buckets(metrics.reads, SECONDS, 1),
    writes: buckets(metrics.writes, SECONDS, 1),
    lag: buckets(metrics.lag, SECONDS, 1),
    depth: metrics.depth,
    rss: metrics.rss,
    title: `serve + 2 workers, ${WRITERS} writers + ${READERS} readers, ${SECONDS} s (after ${WARMUP} s warm-up)`,
  });
  writeFileSync(join(OUT, 'load.svg'), svg);
  let png = '';
  if (spawnSync('convert', ['-version'], { stdio: 'ignore' }).status === 0) {
    const r = spawnSync('convert', ['-density', '96', join(OUT, 'load.svg'), join(OUT, 'load.png')], { stdio: 'ignore' });
    if (r.status === 0) png = 'load.png';
  }
  const md = [
    '# Load run: sustained turn writes and concurrent retrieves',
    '',
    `Command: \`${command}\` (${new Date().toISOString().slice(0, 16)}Z, Node ${process.version}, ${os.cpus().length} cores).`,
    '',
    `Setup: \`neuralcleave serve\` (Redis queues, no in-process workers) and two \`neuralcleave worker --queues embed,persist\` processes on a private redis-server and one SQLite file (WAL), embedder \`hash\`, all on loopback; this script drives ${WRITERS} writer connections (\`POST /sessions/:id/turns\`, 1–3 turns per request, ${USERS} users × ${SESSIONS_PER_USER} sessions) and ${READERS} reader connections (\`POST /memory/retrieve\`, top_k 8) from one process on the same machine. ${WARMUP} s of warm-up are not counted.`,
    '',
    '| figure | value |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    '',
    `![latency and queue depth over time](${png || 'load.svg'})`,
    '',
    `Queue lag is sampled: every 250 ms the latest acknowledged turn is watched until the turn log shows it embedded and persisted. The machine is shared with other work (load average ${loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end), so figures vary between runs.`,
    '',
  ].join('\n');
  writeFileSync(join(OUT, 'load.md'), md);
  process.stdout.write(`\n${rows.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\nwritten: bench/out/load.md, bench/out/load.svg${png ? ', bench/out/load.png' : ''}\n`);
  agent.destroy();
  if (!withinBound) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`load run failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
