// Accepted turns/s over HTTP in the multi-host shape: `neuralcleave serve --processes 1` with
// database_url and redis_url, each API process in a working folder of its own (no SQLite file may
// appear in it), on a PostgreSQL database and a redis-server of this run's own. Single-turn
// POST /sessions/:id/turns (the http section's write load, 20 connections per API process) at one API
// process, then at two against the same database and Redis, rounds alternating, medians reported.
// No worker runs meanwhile: what is measured is acceptance (turn log commit, short-term write,
// enqueue), and the jobs wait in Redis as they would for workers on other hosts. Afterwards the turn
// log must hold at least every turn that got a 2xx.
// Takes: --quick (one short round). Adds rows to the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { Postgres } from '../../src/adapters/postgres/pool.js';
import { createDatabase } from '../../test/helpers/postgres.js';
import { startRedis } from '../../test/helpers/redis.js';
import type { Report } from '../report.js';
import { KEY, listeningPort, runWrites } from './http.js';

const TARGET = 1.6;

interface Api {
  proc: ChildProcess;
  port: number;
  dir: string;
}

/** One API process of the multi-host shape in a folder of its own; resolves once it listens. */
async function startApi(env: Record<string, string>, dir: string): Promise<Api> {
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const proc = spawn(process.execPath, [cli, 'serve', '--processes', '1'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await listeningPort(proc, 'serve (database_url)');
  return { proc, port, dir };
}

function stopApi(api: Api): Promise<void> {
  if (api.proc.exitCode !== null || api.proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    api.proc.once('exit', () => resolve());
    api.proc.kill('SIGTERM');
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ok = (r: autocannon.Result) => r['2xx'];

export async function httpRows(report: Report, { quick }: { quick: boolean }): Promise<void> {
  const rounds = quick ? 1 : 3;
  const seconds = quick ? 4 : 8;
  const db = await createDatabase('nc_bench_http');
  const redis = await startRedis();
  const root = mkdtempSync(join(tmpdir(), 'nc-bench-pg-http-'));
  const apis: Api[] = [];
  try {
    const env = {
      NEURALCLEAVE_DATABASE_URL: db.url,
      NEURALCLEAVE_REDIS_URL: redis.url,
      NEURALCLEAVE_REDIS_PREFIX: 'bench',
      NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
      NEURALCLEAVE_LOG_LEVEL: 'error',
      NEURALCLEAVE_PORT: '0',
      NEURALCLEAVE_API_KEYS: `${KEY}=*`,
    };
    // one after the other: the first migrates the database, the second finds it done
    for (const name of ['api-a', 'api-b']) apis.push(await startApi(env, mkdtempSync(join(root, `${name}-`))));
    const [a, b] = apis as [Api, Api];
    let acknowledged = ok(await runWrites(a.port, 2, 'warm-a')) + ok(await runWrites(b.port, 2, 'warm-b'));
    const one: number[] = [];
    const two: number[] = [];
    let failures = 0;
    for (let i = 0; i < rounds; i++) {
      const r1 = await runWrites(a.port, seconds, `one-${i}`);
      one.push(ok(r1) / r1.duration);
      const r2 = await Promise.all([runWrites(a.port, seconds, `two-a-${i}`), runWrites(b.port, seconds, `two-b-${i}`)]);
      two.push(r2.reduce((s, r) => s + ok(r) / r.duration, 0));
      acknowledged += ok(r1) + ok(r2[0]) + ok(r2[1]);
      failures += [r1, ...r2].reduce((s, r) => s + r.non2xx + r.errors, 0);
    }
    const pg = new Postgres({ url: db.url, max: 1 });
    let logged: number;
    try {
      [{ n: logged }] = (await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM turns')) as [{ n: number }];
    } finally {
      await pg.close();
    }
    if (logged < acknowledged) throw new Error(`the turn log holds ${logged} turns but ${acknowledged} got a 2xx`);
    const files = apis.filter((x) => existsSync(join(x.dir, 'data', 'neuralcleave.db')));
    if (files.length > 0) throw new Error(`an API process with database_url created an SQLite file in ${files.map((x) => x.dir).join(', ')}`);

    const r1 = median(one);
    const r2 = median(two);
    const data = `one turn per request, 20 connections per API process, ${seconds} s, median of ${rounds}; serve --processes 1 each, Redis queues, no worker running; turn log afterwards ${logged.toLocaleString('en-US')} turns ≥ ${acknowledged.toLocaleString('en-US')} acknowledged${failures ? `; ${failures} non-2xx or errors` : ''}`;
    report.add({ section: 'postgres', metric: 'accepted turns/s over HTTP, one API process (PostgreSQL + Redis)', value: r1, unit: 'turns/s', note: `${data}; runs: ${one.map(Math.round).join(', ')}` });
    report.add({
      section: 'postgres', metric: 'accepted turns/s over HTTP, two API processes, same database', value: r2, unit: 'turns/s', baseline: r1, baselineLabel: 'one API process, same run',
      ratio: r2 / r1, target: `≥ ${TARGET}× one process`, met: r2 / r1 >= TARGET, note: `${data}; runs: ${two.map(Math.round).join(', ')}`,
    });
  } finally {
    await Promise.all(apis.map(stopApi));
    await redis.stop(true);
    await db.drop();
    rmSync(root, { recursive: true, force: true });
  }
}
