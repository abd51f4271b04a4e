import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { wire, type Services, type SharedBackends } from './library.js';
import { startServer } from '../api/server.js';
import { ConnectionShare, ConnectionTally } from '../cluster/connections.js';
import { answerCalls, PrimaryCalls, sendToPrimary } from '../cluster/ipc.js';
import { QUEUE_METHODS, SHORT_TERM_METHODS, sharedQueue, sharedShortTerm, type SharedPart } from '../cluster/shared.js';
import type { BackendReport } from '../backends.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { Memory } from '../memory/memory.js';
import { CommandFailed } from '../cli/context.js';
import { onShutdown } from '../lifecycle/shutdown.js';
import { prepareTokenizer } from './build.js';
import { warmUp } from './warm-up.js';

/** what the primary lends its HTTP processes, and how it reports those backends */
interface Lent {
  parts: SharedPart[];
  reports: { queue: BackendReport; short_term: BackendReport };
}

/** a worker process that dies this soon after its start, this many times in a row, stops the service */
const CRASH_LOOP_MS = 10_000;
const CRASH_LOOP_TIMES = 3;

/**
 * The composition root of `serve` (docs/architecture.md, composition roots): one process doing
 * everything (`processes` 1), or the primary of `serve --processes N` and its HTTP processes.
 */
export function serve(config: Config, log: Logger, processes: number): Promise<void> {
  if (processes === 1) return serveOne(config, log);
  if (cluster.isPrimary) return servePrimary(config, log, processes);
  return serveWorker(config, log);
}

/**
 * Starts the HTTP server; a bind that fails closes the services and says what to do: a port in use
 * is the usual first-hour stumble (a `serve` already running).
 */
async function listen(services: Services, connections?: ConnectionShare): Promise<Awaited<ReturnType<typeof startServer>>> {
  const { config } = services;
  return startServer({ memory: new Memory(services), services }, connections).catch(async (err: unknown) => {
    await services.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new CommandFailed(`${config.host}:${config.port} is already in use (another neuralcleave serve?): stop that process, or pick another port with --port N (or port / NEURALCLEAVE_PORT)`);
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new CommandFailed(`cannot bind ${config.host}: not an address of this machine (--host / host)`);
    if (code === 'EACCES') throw new CommandFailed(`not allowed to bind ${config.host}:${config.port} (ports below 1024 need privileges): pick another with --port N`);
    throw err;
  });
}

/** what a process answering HTTP does before it listens, so that its first requests do not wait for it */
async function prepareToAnswer(log: Logger): Promise<void> {
  prepareTokenizer(log);
  await warmUp(log).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'the retrieval warm-up failed; the first retrieves compile their code'));
}

function wireServe(config: Config, log: Logger): Promise<Services> {
  // with Redis the workers are separate `neuralcleave worker` processes unless serve_runs_workers
  return wire(config, { logger: log, scheduleArchival: true, ...(config.serve_runs_workers ? { runWorkers: true } : {}) });
}

/**
 * Loads the embedded index into memory once the embedder is ready, rather than in the first
 * retrieve (~1–2 s per 100k vectors of synchronous work). After `listening`: start-up is not held up
 * by a model download.
 */
function warmSemantic(services: Services): void {
  const vectors = services.vectors as Services['vectors'] & { warm?: (tag: { id: string; dim: number }) => Promise<void> };
  if (!vectors.warm) return;
  void services.embedders.ready().then((e) => (e ? vectors.warm!(e) : undefined)).catch((err: unknown) => {
    services.log.warn({ err: (err as Error).message }, 'the semantic index could not be loaded ahead of the first retrieve');
  });
}

/** how long an HTTP process of `serve --processes N` waits for its embedder before it listens (a built-in or cached model is ready by then; a download is not waited for) */
const WARM_BEFORE_LISTENING_MS = 1000;

/**
 * For an HTTP process of `serve --processes N`: loads the embedded index before it listens, when its
 * embedder is ready within WARM_BEFORE_LISTENING_MS. The primary hands connections only to processes
 * that listen, so a new or replaced process takes its share once it can answer them; loading after it
 * listened held its first connections for the whole load (~2 s of CPU per 100k vectors, 6+ s on a
 * loaded machine: issue #25's 16-connection rows on 100k stores). Returns whether it was loaded.
 */
async function warmBeforeListening(services: Services): Promise<boolean> {
  const vectors = services.vectors as Services['vectors'] & { warm?: (tag: { id: string; dim: number }) => Promise<void> };
  if (!vectors.warm) return false;
  let timer: NodeJS.Timeout | undefined;
  const embedder = await Promise.race([services.embedders.ready(), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), WARM_BEFORE_LISTENING_MS)))]);
  clearTimeout(timer);
  if (!embedder) return false;
  try {
    const started = performance.now();
    await vectors.warm(embedder);
    services.log.debug({ ms: Math.round(performance.now() - started) }, 'semantic index loaded before listening');
    return true;
  } catch (err) {
    services.log.warn({ err: (err as Error).message }, 'the semantic index could not be loaded ahead of the first retrieve');
    return true;
  }
}

function listeningLine(addr: { address: string; port: number; family?: string; addressType?: number | string }): void {
  const v6 = addr.family === 'IPv6' || addr.addressType === 6;
  // the line tests and scripts wait for
  process.stderr.write(`listening on http://${v6 ? `[${addr.address}]` : addr.address}:${addr.port}\n`);
}

/** Today's shape: the API, the queue, the workers and the short-term tier in one process. */
async function serveOne(config: Config, log: Logger): Promise<void> {
  await prepareToAnswer(log);
  const services = await wireServe(config, log);
  const server = await listen(services);
  const addr = server.address() as AddressInfo;
  log.info({ host: addr.address, port: addr.port, backends: services.backends() }, 'neuralcleave serving');
  listeningLine(addr);
  warmSemantic(services);
  await onShutdown(log, async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await services.close();
  });
}

/**
 * The primary of `serve --processes N`: it runs what must run once — the job processors (in-process
 * queue) or nothing more than `serve` alone would (Redis), the reconciler, the archival schedule, the
 * erasure watcher — and forks N HTTP processes that share the port and the SQLite file (WAL). It
 * accepts the turns they receive (one writer of the turn log, so one group commit serves them all),
 * and without Redis lends them its queue and short-term tier, all over IPC. A worker process that dies is replaced;
 * SIGTERM stops the workers first (their requests finish), then the primary's jobs.
 */
async function servePrimary(config: Config, log: Logger, processes: number): Promise<void> {
  // its jobs count tokens (compaction, archival); it answers no HTTP, so nothing else is warmed
  prepareTokenizer(log);
  const services = await wireServe(config, log);
  const lent: SharedPart[] = [];
  const { queue, short_term } = services.backends();
  const targets: Record<string, { object: object; methods: readonly string[] }> = {
    cluster: { object: { lent: (): Lent => ({ parts: lent, reports: { queue, short_term } }) }, methods: ['lent'] },
    // one writer of the turn log: group commits span every HTTP process
    turns: { object: services.writePath, methods: ['accept'] },
  };
  if (services.shortTerm.backend === 'memory') {
    lent.push('short_term');
    targets.short_term = { object: services.shortTerm, methods: SHORT_TERM_METHODS };
  }
  if (services.queue.backend === 'in-process') {
    lent.push('queue');
    targets.queue = { object: services.queue, methods: QUEUE_METHODS };
  }
  // the HTTP processes accept their connections themselves (the kernel hands each to one that waits):
  // with node:cluster's round robin the primary accepted every connection and passed it on, so while
  // it ran the queue's jobs a probe's /health on a connection of its own waited behind them (112–123
  // ms during a write of 30 turns of 32,000 characters, 45–69 ms so). A busy process is not waiting,
  // so connections go to the one that is; keep-alive connections that all went to one are spread again
  // by the processes' connection counts (src/cluster/connections.ts)
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ serialization: 'advanced' });
  let stopping = false;
  // before the service is up a dying process is not replaced: its failure (a port in use) ends the start
  let serving = false;
  const crashes: number[] = [];
  // each HTTP process's keep-alive connections, the total told to all (src/cluster/connections.ts)
  const connections = new ConnectionTally();
  const fork = (): Worker => {
    const worker = cluster.fork();
    const started = Date.now();
    answerCalls(worker, targets, log.child({ component: 'cluster' }));
    connections.watch(worker);
    worker.once('exit', (code, signal) => {
      if (stopping || !serving) return;
      log.error({ worker: worker.process.pid, code, signal }, 'an HTTP process exited; starting another');
      if (Date.now() - started < CRASH_LOOP_MS) crashes.push(Date.now());
      else crashes.length = 0;
      if (crashes.length >= CRASH_LOOP_TIMES) {
        log.fatal({ times: crashes.length }, 'HTTP processes keep dying at start; stopping');
        process.kill(process.pid, 'SIGTERM');
        return;
      }
      fork();
    });
    return worker;
  };
  const listening = new Promise<{ address: string; port: number; addressType?: number | string }>((resolve, reject) => {
    let up = 0;
    cluster.on('listening', (_w, addr) => {
      if (++up === processes) resolve(addr);
    });
    cluster.once('exit', (w, code) => {
      if (up < processes) reject(new Error(`an HTTP process exited with ${code} before the service was up`));
    });
  });
  for (let i = 0; i < processes; i++) fork();
  const addr = await listening.catch(async (err: unknown) => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGKILL');
    await services.close();
    throw new CommandFailed(`${(err as Error).message}; its reason is above`);
  });
  serving = true;
  log.info({ host: addr.address, port: addr.port, processes, lent, backends: services.backends() }, 'neuralcleave serving');
  listeningLine(addr);
  await onShutdown(log, async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await services.close();
  });
}

/** One HTTP process of `serve --processes N`: the API over the shared file, no jobs of its own. */
async function serveWorker(config: Config, parent: Logger): Promise<void> {
  const log = parent.child({ process: cluster.worker?.id });
  const calls = new PrimaryCalls();
  const lent = await calls.call<Lent>('cluster', 'lent', []);
  const shared: SharedBackends = {
    acceptIn: (turns) => calls.call('turns', 'accept', [turns]),
    ...(lent.parts.includes('queue') && lent.parts.includes('short_term')
      ? { inProcess: { shortTerm: sharedShortTerm(calls), queue: sharedQueue(calls), reports: lent.reports } }
      : {}),
  };
  // the primary reconciles, schedules archival and watches erasures: once for the service
  await prepareToAnswer(log);
  const services = await wire(config, { logger: log, runWorkers: false, reconcile: false, shared });
  const warmed = await warmBeforeListening(services);
  const connections = new ConnectionShare((m) => sendToPrimary(process, m));
  connections.listen(process);
  const server = await listen(services, connections).catch((err: unknown) => {
    // the IPC channel would keep this process up: without it, it exits with the reason (exit 1)
    process.disconnect();
    throw err;
  });
  if (!warmed) warmSemantic(services);
  await onShutdown(log, async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await services.close();
  });
  // the IPC channel to the primary is the last handle keeping this process up
  process.disconnect();
}
