// Issue #25, the 16-connection cluster row on the 100k real-text stores, alone: builds one store once
// (kept in --store DIR between runs: seeding 100k turns takes minutes), then starts `serve --processes
// N` on it, warms it as the realtext section does and sends 16 connections of every filter kind mixed,
// reading each answer: status, latency, each tier's status, and the CPU of every serve process from
// /proc each second (also for some seconds after the clients stop: work a caller gave up on that still
// runs shows there), and the peak resident memory of each. /health is asked every 250 ms on a
// connection of its own meanwhile.
//   node dist/bench/repro-cluster-realtext.js --store /tmp/nc-store-one --which one [--seconds 8] [--warm 4] [--processes 2] [--connections 16] [--after 6]
// Extra env for the serve processes is passed with --env K=V, node flags (inherited by the cluster's
// processes: --cpu-prof --cpu-prof-dir=DIR) with --node-arg FLAG.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenOf, peakResidentBytes, processCpuSeconds } from './proc-cpu.js';
import { percentile } from './report.js';
import { benchServices, cannon, clusterEnv, KEY, listeningPort, seedSessions } from './sections/http.js';
import { bodyOf, KINDS, readLocomoCorpus, readRealMem, sample, scaled, settle, warmUntilSteady, type Corpus } from './sections/realtext.js';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const store = resolve(arg('store', '/tmp/nc-store-one'));
const which = arg('which', 'one');
const seconds = Number(arg('seconds', '8'));
const warm = Number(arg('warm', '4'));
const processes = Number(arg('processes', '2'));
const connections = Number(arg('connections', '16'));
const after = Number(arg('after', '6'));
const warmConnections = Number(arg('warm-connections', '16'));
const extraEnv: Record<string, string> = {};
const nodeArgs: string[] = [];
process.argv.forEach((a, i) => {
  if (a === '--node-arg') nodeArgs.push(process.argv[i + 1]!);
  if (a === '--env') {
    const kv = process.argv[i + 1]!;
    extraEnv[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  }
});

const data = resolve(process.env.NC_BENCH_REALTEXT_DATA ?? '/work/shared/data');
const realmem = readRealMem(join(data, 'realmem-dev'));
const locomo = readLocomoCorpus(join(data, 'locomo-dev.json'));
const base: Corpus = { sessions: [...realmem.sessions, ...locomo.sessions], queries: [...realmem.queries, ...locomo.queries] };
const corpus = which === 'asis' ? base : scaled(base, 100_000, which === 'one');
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? '?';

if (!existsSync(join(store, 'bench.db'))) {
  mkdirSync(store, { recursive: true });
  const t0 = performance.now();
  const { services } = await benchServices(store);
  await seedSessions(services, corpus.sessions);
  await services.close();
  process.stdout.write(`seeded ${corpus.sessions.reduce((n, s) => n + s.turns.length, 0)} turns into ${store} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}

const qs = sample(corpus.queries, 200);
const bodies = qs.flatMap((q) => Object.keys(KINDS).map((kind) => JSON.stringify(bodyOf(q, kind))));

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const proc = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--processes', String(processes)], { env: { ...clusterEnv(store), ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
// a run that fails partway (a throw, an unhandled rejection) must not leave the cluster serving
process.once('exit', () => proc.kill('SIGTERM'));
let stderr = '';
proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
const port = await listeningPort(proc, 'serve');
const pids = () => [proc.pid!, ...childrenOf(proc.pid!)];
const cpu = (ps: number[]) => ps.map((p) => (processCpuSeconds(p) ?? NaN) * 1000);

// CPU timeline, each second: ms of CPU of each process in that second
const timeline: string[] = [];
let last = cpu(pids());
let tick = 0;
let phase = 'warm';
const timer = setInterval(() => {
  const now = cpu(pids());
  timeline.push(`${String(++tick).padStart(3)} ${phase.padEnd(5)} load ${loadavg()} cpu ms/s ${now.map((c, i) => (c - (last[i] ?? 0)).toFixed(0).padStart(5)).join(' ')}`);
  last = now;
}, 1000);

let w = 0;
const warmStart = performance.now();
// --steady: the realtext section's warm-up (2 s windows until steady, then until the processes idle);
// otherwise a fixed `warm` seconds, as the section had it
if (process.argv.includes('--steady')) {
  const r = await warmUntilSteady(port, warm, () => bodies[w++ % bodies.length]!);
  const idle = await settle(pids());
  process.stdout.write(`warm-up: ${r.rounds} rounds (${r.rates.join(', ')} req/s), idle after ${idle.toFixed(1)} s\n`);
} else if (warm > 0) await cannon(port, warmConnections, warm, '/memory/retrieve', () => bodies[w++ % bodies.length]!);
const warmMs = performance.now() - warmStart;

// the measured run: our own 16 keep-alive connections, reading each answer
phase = 'run';
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
interface Answer {
  status: number;
  ms: number;
  body: string;
}
function post(body: string, path = '/memory/retrieve', ag = agent, method = 'POST'): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((res) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, agent: ag, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...(method === 'POST' ? { 'content-length': Buffer.byteLength(body) } : {}) } },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode ?? 0, ms: performance.now() - t0, body: Buffer.concat(chunks).toString() }));
        r.on('error', () => res({ status: -1, ms: performance.now() - t0, body: '' }));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => res({ status: -1, ms: performance.now() - t0, body: '' }));
    req.end(method === 'POST' ? body : undefined);
  });
}
const c0 = cpu(pids());
const ps0 = pids();
const answers: Answer[] = [];
const health: number[] = [];
let k = 0;
const end = performance.now() + seconds * 1000;
let stopHealth = false;
const healthLoop = (async () => {
  while (!stopHealth) {
    const a = await post('', '/health', healthAgent, 'GET');
    health.push(a.ms);
    await new Promise((r) => setTimeout(r, 250));
  }
})();
const runStart = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < end) answers.push(await post(bodies[k++ % bodies.length]!));
  }),
);
const runMs = performance.now() - runStart;
stopHealth = true;
await healthLoop;
const c1 = cpu(ps0);
phase = 'after';
await new Promise((r) => setTimeout(r, after * 1000));
const c2 = cpu(ps0);
clearInterval(timer);

const byStatus = new Map<number, number>();
const tiers = new Map<string, number>();
for (const a of answers) {
  byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  if (a.status === 200) {
    const t = (JSON.parse(a.body) as { tiers: Record<string, { status: string }> }).tiers;
    for (const [name, r] of Object.entries(t)) tiers.set(`${name}:${r.status}`, (tiers.get(`${name}:${r.status}`) ?? 0) + 1);
  } else if (byStatus.get(a.status)! <= 2) process.stdout.write(`answer ${a.status}: ${a.body.slice(0, 300)}\n`);
}
const ok = answers.filter((a) => a.status === 200).map((a) => a.ms).sort((a, b) => a - b);
const hs = [...health].sort((a, b) => a - b);
const used = ps0.map((_, i) => c1[i]! - c0[i]!);
const tail = ps0.map((_, i) => c2[i]! - c1[i]!);
console.log(timeline.join('\n'));
console.log(`store ${which} (${store}), ${processes} processes, ${connections} connections, warm-up ${(warmMs / 1000).toFixed(1)} s (${warm} s asked), run ${(runMs / 1000).toFixed(1)} s, load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
console.log(`answers: ${answers.length}, by status ${JSON.stringify(Object.fromEntries(byStatus))}; ${(ok.length / (runMs / 1000)).toFixed(1)} ok/s; p50 ${percentile(ok, 50)?.toFixed(0)} ms, p99 ${percentile(ok, 99)?.toFixed(0)} ms, max ${ok.at(-1)?.toFixed(0)}`);
console.log(`tiers: ${JSON.stringify(Object.fromEntries([...tiers].sort()))}`);
console.log(`/health: ${hs.length} asked, p50 ${percentile(hs, 50)?.toFixed(1)} ms, max ${hs.at(-1)?.toFixed(1)} ms`);
console.log(`CPU during the run (ms): ${used.map((u) => u.toFixed(0)).join(' / ')} (primary / HTTP processes), per ok answer ${used.map((u) => (u / Math.max(1, ok.length)).toFixed(1)).join(' / ')}; in the ${after} s after the clients stopped: ${tail.map((u) => u.toFixed(0)).join(' / ')}`);
console.log(`peak resident memory (MB): ${ps0.map((p) => ((peakResidentBytes(p) ?? NaN) / 2 ** 20).toFixed(0)).join(' / ')} (primary / HTTP processes)`);
const stopped = new Promise<void>((r) => proc.once('exit', () => r()));
proc.kill('SIGTERM');
await stopped;
if (/error|Error/.test(stderr)) console.log(`serve stderr (first 1500 chars):\n${stderr.slice(0, 1500)}`);
process.exit(0);
