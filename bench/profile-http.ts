// CPU time per HTTP request of each process of `neuralcleave serve --processes N` (from /proc, so the
// figure hardly moves with the load of a shared machine, unlike req/s), for single-turn writes or
// retrieves, beside the load generator's own CPU. Seeds a fresh file over HTTP first for retrieves.
//   node dist/bench/profile-http.js writes|retrieve [--processes N] [--seconds S] [--turns T] [--cli PATH] [--cpu-prof DIR]
// `--cli` points at another build's dist/src/cli/main.js (A/B against another tree in the same minutes);
// `--cpu-prof DIR` has every serve process write a V8 CPU profile there on exit.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { childrenOf, processCpuSeconds, processWrites } from './proc-cpu.js';
import { clusterEnv, generate, KEY, listeningPort, queries, runWrites } from './sections/http.js';

const args = process.argv.slice(2);
const what = args[0] === 'retrieve' ? 'retrieve' : 'writes';
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : def;
};
const processes = Number(opt('processes', '2'));
const seconds = Number(opt('seconds', '8'));
const turns = Number(opt('turns', '20000'));
const cli = opt('cli', fileURLToPath(new URL('../src/cli/main.js', import.meta.url)));
const cpuProf = opt('cpu-prof', '');

/** utime + stime of a process, ms */
function cpuMs(pid: number): number {
  const s = processCpuSeconds(pid);
  if (s === null) throw new Error(`process ${pid} is gone`);
  return s * 1000;
}

async function post(port: number, path: string, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
}

async function settled(port: number): Promise<void> {
  for (;;) {
    const m = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    const pending = [...m.matchAll(/^neuralcleave_turn_log_pending\{[^}]*\} (\d+)/gm)].reduce((n, x) => n + Number(x[1]), 0);
    if (pending === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function retrieves(port: number, bodies: string[], secs: number): Promise<autocannon.Result> {
  let i = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: 16,
        duration: secs,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        requests: [{ method: 'POST', path: '/memory/retrieve', setupRequest: (req) => ({ ...req, body: bodies[i++ % bodies.length]! }) }],
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'nc-profile-http-'));
const env = clusterEnv(dir);
// the HTTP processes inherit the primary's execArgv
const prof = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : [];
const proc = spawn(process.execPath, [...prof, cli, 'serve', '--processes', String(processes)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
try {
  const port = await listeningPort(proc, 'serve');
  let bodies: string[] = [];
  if (what === 'retrieve') {
    const { sessions } = generate(turns);
    const all = sessions.flatMap((s) => s.turns.map((t) => ({ s: s.session, t })));
    for (let i = 0; i < all.length; i += 1000) {
      const chunk = all.slice(i, i + 1000);
      // one session per request: the path names it
      const bySession = new Map<string, typeof chunk>();
      for (const x of chunk) bySession.set(x.s, [...(bySession.get(x.s) ?? []), x]);
      await Promise.all(
        [...bySession].map(async ([s, xs]) => {
          const r = await post(port, `/sessions/${s}/turns`, { turns: xs.map(({ t }) => ({ id: t.id, user_id: t.user_id, role: t.role, ...(t.name ? { name: t.name } : {}), content: t.content, created_at: t.created_at, pinned: t.pinned })) });
          if (r.status !== 202) throw new Error(`seeding: ${r.status} ${await r.text()}`);
        }),
      );
    }
    await settled(port);
    bodies = queries(sessions, 400);
  }
  const run = (secs: number) => (what === 'writes' ? runWrites(port, secs, `p${Date.now()}`) : retrieves(port, bodies, secs));
  // warm-up: JIT, connections, and for retrieves each process's index catching up with the seeded file
  await run(what === 'retrieve' ? 6 : 2);
  if (what === 'writes') await settled(port);
  const pids = [proc.pid!, ...childrenOf(proc.pid!)];
  const before = pids.map(cpuMs);
  const written0 = processWrites(proc.pid!);
  const self0 = process.cpuUsage();
  const load = loadavg()[0]!;
  const r = await run(seconds);
  const self = process.cpuUsage(self0);
  const during = pids.map(cpuMs);
  if (what === 'writes') await settled(port); // the jobs of these writes are part of their cost
  const after = pids.map(cpuMs);
  const written1 = processWrites(proc.pid!);
  const n = r['2xx'];
  const per = (ms: number) => (ms / n).toFixed(3);
  const rows = pids.map((p, i) => `${i === 0 ? (processes === 1 ? 'the process' : 'primary') : `http ${i}`} ${per(during[i]! - before[i]!)} ms (with the jobs' drain: ${per(after[i]! - before[i]!)})`);
  const total = pids.reduce((s, _p, i) => s + after[i]! - before[i]!, 0);
  const kb = (bytes: number) => (bytes / n / 1024).toFixed(1);
  const written = written0 && written1 ? `; written by the ${processes === 1 ? 'process' : 'primary'} a request (jobs' drain included): ${kb(written1.wchar - written0.wchar)} KB handed to write(), ${kb(written1.disk - written0.disk)} KB dirtied for the disk` : '';
  process.stdout.write(
    `${what}, serve --processes ${processes}: ${n} ok (${r.non2xx + r.errors} not), ${(n / r.duration).toFixed(0)}/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, load ${load.toFixed(1)}\n` +
      `CPU per request: ${rows.join('; ')}; serve total ${per(total)} ms; autocannon ${per((self.user + self.system) / 1000)} ms${written}\n`,
  );
} finally {
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
