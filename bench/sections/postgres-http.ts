// Accepted turns/s over HTTP in the multi-host shape: `neuralcleave serve --processes 1` with
// database_url and redis_url, each API process in a working folder of its own (no SQLite file may
// appear in it), on a PostgreSQL database and a redis-server of this run's own. Single-turn
// POST /sessions/:id/turns (the http section's write load, 20 connections per API process) at one API
// process, then at two against the same database and Redis, rounds alternating, medians reported.
// No worker runs meanwhile: what is measured is acceptance (turn log commit, short-term write,
// enqueue), and the jobs wait in Redis as they would for workers on other hosts. Afterwards the turn
// log must hold at least every turn that got a 2xx.
// Every run also charges CPU seconds to each part (/proc/<pid>/stat): the API processes, this
// database's PostgreSQL backends, redis-server and the load generator (autocannon, in this process),
// per accepted turn. From the one-process runs' figures a row gives the ceiling this machine allows two
// API processes — every part keeping its CPU per turn, 2 cores for all of them — beside the measured
// two-process figure, so the report says whether the software or the hardware holds the ratio.
// Takes: --quick (one short round); NC_BENCH_API_CLI runs another build's API. Adds rows to the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { Postgres } from '../../src/adapters/postgres/pool.js';
import { createDatabase } from '../../test/helpers/postgres.js';
import { startRedis } from '../../test/helpers/redis.js';
import { cpuBetween, cpuOf, ownCpuSeconds } from '../proc-cpu.js';
import type { Report, Section } from '../report.js';
import { KEY, listeningPort, runWrites } from './http.js';

const TARGET = 1.6;
/** what the ceiling assumes the machine gives the whole deployment */
const CORES = 2;

interface Api {
  proc: ChildProcess;
  port: number;
  dir: string;
}

/** One API process of the multi-host shape in a folder of its own; resolves once it listens. */
async function startApi(env: Record<string, string>, dir: string): Promise<Api> {
  // NC_BENCH_API_CLI: another build's dist/src/cli/main.js, for an A/B of the API under the same meter
  const cli = process.env.NC_BENCH_API_CLI ?? fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
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

/** CPU seconds of every part at one moment */
interface Reading {
  wall: number;
  api: Map<number, number>;
  /** the API processes' main (JavaScript) threads */
  apiMain: Map<number, number>;
  /** this database's backends (the API pools' connections, autovacuum on its tables) */
  db: Map<number, number>;
  /** the server's WAL writer, checkpointer and background writer: shared with every other database on it */
  aux: Map<number, number>;
  redis: Map<number, number>;
  load: number;
}

/** CPU seconds each part used over the runs of one shape, and the turns they accepted */
class Charge {
  turns = 0;
  wall = 0;
  api = 0;
  apiMain = 0;
  db = 0;
  aux = 0;
  redis = 0;
  load = 0;

  add(a: Reading, b: Reading, turns: number): void {
    this.turns += turns;
    this.wall += (b.wall - a.wall) / 1000;
    this.api += cpuBetween(a.api, b.api);
    this.apiMain += cpuBetween(a.apiMain, b.apiMain);
    this.db += cpuBetween(a.db, b.db);
    this.aux += cpuBetween(a.aux, b.aux);
    this.redis += cpuBetween(a.redis, b.redis);
    this.load += b.load - a.load;
  }

  /** ms of CPU per accepted turn */
  per(part: 'api' | 'apiMain' | 'db' | 'aux' | 'redis' | 'load'): number {
    return (this[part] * 1000) / this.turns;
  }

  /** CPU seconds of everything this deployment's turns cost, the server's shared writers left out (other databases use them too) */
  private get counted(): number {
    return this.api + this.db + this.redis + this.load;
  }

  /** ms of CPU per accepted turn, every counted part */
  get total(): number {
    return (this.counted * 1000) / this.turns;
  }

  describe(): string {
    const f = (x: number) => x.toFixed(3);
    const cores = this.counted / this.wall;
    return `CPU ms per accepted turn: API ${f(this.per('api'))} (main thread ${f(this.per('apiMain'))}), PostgreSQL backends ${f(this.per('db'))}, redis-server ${f(this.per('redis'))}, load generator ${f(this.per('load'))} (server WAL writer/checkpointer/bgwriter ${f(this.per('aux'))}, not counted: shared); ${cores.toFixed(2)} cores busy over ${this.turns.toLocaleString('en-US')} turns`;
  }
}

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
    const probe = new Postgres({ url: db.url, max: 1 });
    const redisClient = new Redis(redis.url, { lazyConnect: true });
    await redisClient.connect();
    const redisPid = Number(/process_id:(\d+)/.exec(await redisClient.info('server'))?.[1]);
    await redisClient.quit();
    const read = async (): Promise<Reading> => {
      const rows = await probe.query<{ pid: number; mine: boolean }>(
        `SELECT pid, datname = current_database() AS mine FROM pg_stat_activity
         WHERE (datname = current_database() AND pid <> pg_backend_pid()) OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
      );
      return {
        wall: performance.now(),
        api: cpuOf(apis.map((x) => x.proc.pid!)),
        apiMain: cpuOf(apis.map((x) => x.proc.pid!), true),
        db: cpuOf(rows.filter((r) => r.mine).map((r) => r.pid)),
        aux: cpuOf(rows.filter((r) => !r.mine).map((r) => r.pid)),
        redis: cpuOf([redisPid]),
        load: ownCpuSeconds(),
      };
    };
    const charge = { one: new Charge(), two: new Charge() };
    let acknowledged = ok(await runWrites(a.port, 2, 'warm-a')) + ok(await runWrites(b.port, 2, 'warm-b'));
    const one: number[] = [];
    const two: number[] = [];
    let failures = 0;
    for (let i = 0; i < rounds; i++) {
      const before1 = await read();
      const r1 = await runWrites(a.port, seconds, `one-${i}`);
      charge.one.add(before1, await read(), ok(r1));
      one.push(ok(r1) / r1.duration);
      const before2 = await read();
      const r2 = await Promise.all([runWrites(a.port, seconds, `two-a-${i}`), runWrites(b.port, seconds, `two-b-${i}`)]);
      charge.two.add(before2, await read(), ok(r2[0]) + ok(r2[1]));
      two.push(r2.reduce((s, r) => s + ok(r) / r.duration, 0));
      acknowledged += ok(r1) + ok(r2[0]) + ok(r2[1]);
      failures += [r1, ...r2].reduce((s, r) => s + r.non2xx + r.errors, 0);
    }
    let logged: number;
    try {
      [{ n: logged }] = (await probe.query<{ n: number }>('SELECT count(*)::int AS n FROM turns')) as [{ n: number }];
    } finally {
      await probe.close();
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
    const load = `load average ${loadavg()[0]!.toFixed(1)} at the end`;
    report.add({ section: 'postgres', metric: 'CPU per accepted turn over HTTP, one API process, all parts', value: charge.one.total, unit: 'ms', note: `${charge.one.describe()}; ${load}` });
    report.add({ section: 'postgres', metric: 'CPU per accepted turn over HTTP, two API processes, all parts', value: charge.two.total, unit: 'ms', note: `${charge.two.describe()}; ${load}` });
    // Perfect scaling: every part keeps the CPU per turn it had with one API process, and the
    // machine's cores serve them all; no API process can go past a core for its main thread.
    const c = charge.one;
    const ceiling = Math.min((CORES * 1000) / c.total, (2 * 1000) / c.per('apiMain'));
    const wanted = TARGET * r1;
    report.add({
      section: 'postgres', metric: `two API processes, ceiling of this machine (${CORES} cores)`, value: ceiling, unit: 'turns/s', baseline: r2, baselineLabel: 'two API processes measured, same run',
      ratio: r2 / ceiling, target: `ceiling ≥ ${TARGET}× one process (${Math.round(wanted)})`, met: ceiling >= wanted,
      note: `${CORES} cores ÷ ${c.total.toFixed(3)} ms CPU per accepted turn of every part (one-process runs); ${TARGET}× one process would need ${((wanted * c.total) / 1000).toFixed(2)} cores at that CPU per turn; NOT MET here means the hardware, not the software, holds the ratio below ${TARGET}×; other users of the machine not counted (${load})`,
    });
  } finally {
    await Promise.all(apis.map(stopApi));
    await redis.stop(true);
    await db.drop();
    rmSync(root, { recursive: true, force: true });
  }
}

const section: Section = (report, { quick }) => httpRows(report, { quick });
export default section;
