// The write path through BullMQ with separate worker processes, beside bare BullMQ on the same Redis.
// Pipeline: this process writes turns through the real write path (turn log, Redis short-term tier,
// `embed` + `persist` jobs) and 1 or 2 `neuralcleave worker` processes (hash embedder) run them;
// timed from the first write until the turn log says every turn is embedded and persisted.
// Bare: the very same job payloads (same count, same sizes, same batches of addBulk, same job
// options) go to 1 or 2 processes running no-op BullMQ Workers at the same concurrency; timed until
// the queues are empty. The ratio pipeline jobs/s ÷ bare jobs/s says what the pipeline costs on top of
// BullMQ itself; target ≥ 0.5.
// Takes: the built CLI (npm run bench builds it); starts its own redis-server on a free port.
// Returns: rows per worker count: turns/s and jobs/s end to end, turns/s acknowledged, bare jobs/s.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { JOB_DEFAULTS } from '../../queues/defaults.js';
import { jobIdFor } from '../../queues/job-ids.js';
import type { EmbedJob, PersistJob } from '../../queues/payloads.js';
import { wire } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { startRedis } from '../../test/helpers/redis.js';
import type { Report, Section } from '../report.js';
import { ChatText } from './chat-text.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const CONCURRENCY = 64;
const BATCH = 500;
const POLL_MS = 20;

interface Payloads {
  embed: Array<{ jobId: string; data: EmbedJob }>;
  persist: Array<{ jobId: string; data: PersistJob }>;
}

function turnsFor(n: number, run: string): Array<Record<string, unknown>> {
  const text = new ChatText(42);
  return Array.from({ length: n }, (_, i) => ({
    id: `${run}-${i}`,
    user_id: `user-${i % 50}`,
    // a few turns per session: no compaction is due, as in a steady stream of many conversations
    session_id: `${run}-s${i % 1000}`,
    ...text.turn(i),
  }));
}

/** Starts `count` processes and resolves when each printed its ready line. */
async function startProcesses(count: number, args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: count }, () => {
      const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      return new Promise<ChildProcess>((resolve, reject) => {
        let out = '';
        child.stderr!.on('data', (d: Buffer) => {
          out += d.toString();
          if (ready.test(out)) resolve(child);
        });
        child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
      });
    }),
  );
}

async function stopProcesses(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
          setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
}

/** The real pipeline; returns seconds until every turn is processed and until every write was acknowledged, and the payloads it enqueued. */
async function pipelineRun(redisUrl: string, workers: number, n: number, run: string): Promise<{ seconds: number; ackSeconds: number; payloads: Payloads }> {
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-bullmq-'));
  const sqlite = join(dir, 'nc.db');
  const prefix = `bench-${run}`;
  const env = {
    NEURALCLEAVE_REDIS_URL: redisUrl,
    NEURALCLEAVE_REDIS_PREFIX: prefix,
    NEURALCLEAVE_SQLITE_PATH: sqlite,
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'warn',
  };
  const children = await startProcesses(workers, [CLI, 'worker', '--queues', 'embed,persist', '--concurrency', String(CONCURRENCY)], env, /worker ready/);
  const config = parseConfig({ redis_url: redisUrl, redis_prefix: prefix, sqlite_path: sqlite, embedding_model: 'hash', log_level: 'silent' });
  const services = await wire(config, { logger: pino({ level: 'silent' }), reconcile: false, autoCompact: false });
  try {
    const turns = turnsFor(n, run);
    const started = performance.now();
    const accepted: Payloads = { embed: [], persist: [] };
    for (let i = 0; i < n; i += BATCH) await services.writePath.addTurns(turns.slice(i, i + BATCH));
    const ackSeconds = (performance.now() - started) / 1000;
    for (;;) {
      const c = await services.turnLog.counts();
      if (c.total === n && c.pending_embed === 0 && c.pending_persist === 0) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const seconds = (performance.now() - started) / 1000;
    // what went onto the queues, for the bare run: the same payloads
    for await (const page of services.turnLog.scan(BATCH)) {
      for (const t of page) {
        accepted.embed.push({
          jobId: jobIdFor('embed', `${t.user_id}\u0000${t.id}`),
          data: { turn_id: t.id, user_id: t.user_id, session_id: t.session_id, role: t.role, name: t.name, kind: 'turn', content: t.content, content_hash: t.content_hash, created_at: t.created_at },
        });
        accepted.persist.push({ jobId: jobIdFor('persist', `${t.user_id}\u0000${t.id}`), data: { user_id: t.user_id, turn_id: t.id } });
      }
    }
    return { seconds, ackSeconds, payloads: accepted };
  } finally {
    await stopProcesses(children);
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bare BullMQ: the same jobs through no-op workers in `workers` other processes; returns seconds. */
async function bareRun(redisUrl: string, workers: number, payloads: Payloads, run: string): Promise<number> {
  const prefix = `bench-${run}:bull`;
  const children = await startProcesses(workers, [SELF, '--noop-worker', redisUrl, prefix, String(CONCURRENCY)], {}, /noop ready/);
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const defaultJobOptions = {
    attempts: JOB_DEFAULTS.attempts,
    backoff: { type: 'exponential' as const, delay: JOB_DEFAULTS.backoffMs },
    removeOnComplete: { count: JOB_DEFAULTS.keepCompleted },
    removeOnFail: { count: JOB_DEFAULTS.keepFailed },
  };
  const queues = { embed: new Queue('embed', { connection: conn, prefix, defaultJobOptions }), persist: new Queue('persist', { connection: conn, prefix, defaultJobOptions }) };
  try {
    await Promise.all(Object.values(queues).map((q) => q.waitUntilReady()));
    const started = performance.now();
    // as the write path does: per batch of turns, one addBulk per queue, both in flight together
    for (let i = 0; i < payloads.embed.length; i += BATCH) {
      await Promise.all(
        (['embed', 'persist'] as const).map((name) =>
          queues[name].addBulk(payloads[name].slice(i, i + BATCH).map((j) => ({ name, data: j.data as unknown, opts: { jobId: j.jobId } }))),
        ),
      );
    }
    for (;;) {
      const counts = await Promise.all(Object.values(queues).map((q) => q.getJobCounts('waiting', 'prioritized', 'active', 'delayed')));
      if (counts.every((c) => (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0)) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await stopProcesses(children);
    await Promise.all(Object.values(queues).map((q) => q.close()));
    conn.disconnect();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const section: Section = async (report: Report, { quick }) => {
  const n = quick ? 2_000 : 5_000;
  const rounds = quick ? 1 : 3;
  const redis = await startRedis();
  try {
    for (const workers of [1, 2]) {
      const pipeline: Array<{ seconds: number; ackSeconds: number }> = [];
      const bare: number[] = [];
      for (let r = 0; r < rounds; r++) {
        // alternate pipeline and bare so that machine noise hits both alike
        const p = await pipelineRun(redis.url, workers, n, `p${workers}-${r}`);
        pipeline.push(p);
        bare.push(await bareRun(redis.url, workers, p.payloads, `b${workers}-${r}`));
      }
      const jobs = 2 * n;
      const pipeJobsPerS = jobs / median(pipeline.map((p) => p.seconds));
      const bareJobsPerS = jobs / median(bare);
      const label = `${workers} worker process${workers > 1 ? 'es' : ''}`;
      const note = `${n} turns, ${jobs} jobs, concurrency ${CONCURRENCY}, median of ${rounds}`;
      report.add({ section: 'bullmq', metric: `end-to-end turns/s, ${label}`, value: n / median(pipeline.map((p) => p.seconds)), unit: 'turns/s', note });
      report.add({ section: 'bullmq', metric: `turns/s acknowledged (write path, producer), ${label}`, value: n / median(pipeline.map((p) => p.ackSeconds)), unit: 'turns/s', note });
      report.add({
        section: 'bullmq',
        metric: `end-to-end jobs/s, ${label}`,
        value: pipeJobsPerS,
        unit: 'jobs/s',
        baseline: bareJobsPerS,
        baselineLabel: `bare BullMQ no-op, same jobs and payloads, ${label}`,
        ratio: pipeJobsPerS / bareJobsPerS,
        target: '≥ 0.5 of bare no-op',
        met: pipeJobsPerS / bareJobsPerS >= 0.5,
        note,
      });
    }
  } finally {
    await redis.stop(true);
  }
};
export default section;

/** `node bullmq.js --noop-worker URL PREFIX CONCURRENCY`: the bare run's worker process. */
async function noopWorker(url: string, prefix: string, concurrency: number): Promise<void> {
  const conn = new Redis(url, { maxRetriesPerRequest: null });
  const workers = ['embed', 'persist'].map((name) => new Worker(name, async () => undefined, { connection: conn, prefix, concurrency }));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  process.stderr.write('noop ready\n');
  process.once('SIGTERM', () => {
    void Promise.all(workers.map((w) => w.close())).then(() => {
      conn.disconnect();
      process.exit(0);
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === '--noop-worker') {
  await noopWorker(process.argv[3]!, process.argv[4]!, Number(process.argv[5]));
}
