// Where an HTTP retrieve's time goes on real text: `Memory.retrieve` in this process against
// `neuralcleave serve` (one process) on the same RealMem dev store, in the same minutes — blocks of 10
// queries alternating between the two, after two warm-up passes each, plain and created_before — with
// the CPU per request of the serve process from /proc (every thread) and of this process (the in-process
// retrieve, or the client's work). With --load, then 16 connections against `serve` and `serve
// --processes N`: req/s and the CPU per request of the primary, each HTTP process and autocannon.
//   node dist/bench/profile-http-realtext.js [--realtext-data DIR] [--passes N] [--fetch] [--load SECONDS] [--processes N] [--cpu-prof DIR]
// --fetch adds a third side, the same requests through fetch; --cpu-prof DIR has every serve process
// write a V8 CPU profile there on exit. The corpus is read from ../shared/data (or --realtext-data) and
// seeded into a temporary file, never into the repository. docs/bench-report.md, "HTTP on real text".
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenOf, processCpuSeconds } from './proc-cpu.js';
import { percentile } from './report.js';
import { benchServices, cannon, clusterEnv, KEY, listeningPort, seedSessions } from './sections/http.js';
import { readRealMem } from './sections/realtext.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : def;
};
const data = resolve(opt('realtext-data', process.env.NC_BENCH_REALTEXT_DATA ?? '../shared/data'));
const passes = Number(opt('passes', '3'));
const loadSeconds = Number(opt('load', '0'));
const processes = Number(opt('processes', '2'));
const cpuProf = opt('cpu-prof', '');
const withFetch = args.includes('--fetch');
const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const QUERIES = 150;
const BLOCK = 10;

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const cpuMs = (pid: number) => (processCpuSeconds(pid) ?? NaN) * 1000;

async function serve(dir: string, n: number): Promise<{ proc: ChildProcess; port: number }> {
  const prof = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [];
  const proc = spawn(process.execPath, [...prof, cli, 'serve', '--processes', String(n)], { env: clusterEnv(dir), stdio: ['ignore', 'ignore', 'pipe'] });
  return { proc, port: await listeningPort(proc, `serve --processes ${n}`) };
}

async function stop(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

const dir = mkdtempSync(join(tmpdir(), 'nc-profile-http-realtext-'));
let server: { proc: ChildProcess; port: number } | undefined;
try {
  const corpus = readRealMem(join(data, 'realmem-dev'));
  const { services, memory } = await benchServices(dir);
  await seedSessions(services, corpus.sessions);
  const step = Math.max(1, Math.floor(corpus.queries.length / QUERIES));
  const qs = corpus.queries.filter((_, i) => i % step === 0).slice(0, QUERIES);
  const body = (q: (typeof qs)[number], kind: string) => ({ query: q.query, user_id: q.user, top_k: 8, ...(kind === 'created_before' ? { filters: { created_before: q.before } } : {}) });
  server = await serve(dir, 1);
  const { port } = server;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (b: unknown) =>
    new Promise<void>((ok, fail) => {
      const text = JSON.stringify(b);
      const req = request(
        { host: '127.0.0.1', port, path: '/memory/retrieve', method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'content-length': Buffer.byteLength(text) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? ok() : fail(new Error(`POST /memory/retrieve answered ${res.statusCode}`))));
        },
      );
      req.on('error', fail);
      req.end(text);
    });
  const viaFetch = async (b: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}/memory/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(b) });
    await res.arrayBuffer();
  };
  const sides: Record<string, (b: ReturnType<typeof body>) => Promise<unknown>> = { 'in process': (b) => memory.retrieve(b), 'HTTP (node:http)': post, ...(withFetch ? { 'HTTP (fetch)': viaFetch } : {}) };
  for (let w = 0; w < 2; w++) for (const q of qs) for (const side of Object.values(sides)) await side(body(q, 'plain'));

  const acc = Object.fromEntries(Object.keys(sides).map((s) => [s, { ms: [] as number[], serve: 0, self: 0 }]));
  const load = loadavg()[0]!;
  for (let p = 0; p < passes; p++) {
    for (const kind of ['plain', 'created_before']) {
      for (let i = 0; i < qs.length; i += BLOCK) {
        for (const [name, side] of Object.entries(sides)) {
          const a = acc[name]!;
          const s0 = cpuMs(server.proc.pid!);
          const c0 = ownCpuMs();
          for (const q of qs.slice(i, i + BLOCK)) {
            const t0 = performance.now();
            await side(body(q, kind));
            a.ms.push(performance.now() - t0);
          }
          a.serve += cpuMs(server.proc.pid!) - s0;
          a.self += ownCpuMs() - c0;
        }
      }
    }
  }
  process.stdout.write(`RealMem dev, ${qs.length} queries x plain and created_before x ${passes} passes, interleaved in blocks of ${BLOCK}, load ${load.toFixed(1)}\n`);
  for (const [name, a] of Object.entries(acc)) {
    a.ms.sort((x, y) => x - y);
    const n = a.ms.length;
    const self = name === 'in process' ? `${(a.self / n).toFixed(2)} ms a retrieve` : `serve ${(a.serve / n).toFixed(2)} ms, client ${(a.self / n).toFixed(2)} ms`;
    process.stdout.write(`  ${name}: p50 ${percentile(a.ms, 50).toFixed(2)} ms, p99 ${percentile(a.ms, 99).toFixed(2)} ms; CPU ${self} (${n} requests)\n`);
  }
  await stop(server.proc);
  server = undefined;

  if (loadSeconds > 0) {
    const bodies = qs.flatMap((q) => ['plain', 'created_before'].map((k) => JSON.stringify(body(q, k))));
    for (const n of [1, processes]) {
      server = await serve(dir, n);
      let w = 0;
      // over 16 connections, so that every HTTP process is warm (one connection reaches one of them)
      await cannon(server.port, 16, 3, '/memory/retrieve', () => bodies[w++ % bodies.length]!);
      const pids = [server.proc.pid!, ...childrenOf(server.proc.pid!)];
      const s0 = pids.map(cpuMs);
      const c0 = ownCpuMs();
      let k = 0;
      const r = await cannon(server.port, 16, loadSeconds, '/memory/retrieve', () => bodies[k++ % bodies.length]!);
      const cpu = pids.map((p, i) => cpuMs(p) - s0[i]!);
      const client = ownCpuMs() - c0;
      const ok = Math.max(1, r['2xx']);
      const per = (ms: number) => (ms / ok).toFixed(2);
      const parts = n === 1 ? `serve ${per(cpu[0]!)} ms` : `primary ${per(cpu[0]!)} ms, HTTP processes ${cpu.slice(1).map(per).join(' + ')} ms`;
      process.stdout.write(
        `serve --processes ${n}, 16 connections, ${loadSeconds} s: ${(r['2xx'] / r.duration).toFixed(1)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms${r.non2xx + r.errors ? `, ${r.non2xx + r.errors} failed` : ''}, load ${loadavg()[0]!.toFixed(1)}\n` +
          `  CPU per request: ${parts}, autocannon ${per(client)} ms; cores busy: serve ${(cpu.reduce((a, b) => a + b, 0) / 1000 / r.duration).toFixed(2)}, autocannon ${(client / 1000 / r.duration).toFixed(2)}\n`,
      );
      await stop(server.proc);
      server = undefined;
    }
  }
  await services.close();
} finally {
  if (server) await stop(server.proc);
  rmSync(dir, { recursive: true, force: true });
}
