import { QUEUE_NAMES, type QueueName } from '../../queues/names.js';
import { processorsFor, type ProcessorDepsByQueue } from '../../workers/processors.js';
import type { Config } from '../config/schema.js';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { turnInputSchema } from '../domain/turn.js';
import type { BackendReports } from '../backends.js';
import type { Embedder } from '../ports/embedder.js';
import { createLogger, type Logger } from '../logger.js';
import { onShutdown } from '../lifecycle/shutdown.js';
import { Reconciler } from '../memory/reconciler.js';
import { WritePath } from '../memory/write-path.js';
import { ShortTermGuard } from '../memory/short-term-guard.js';
import { TokenCounter } from '../compaction/tokens.js';
import { selectLlm } from '../llm/select.js';
import { scheduleArchival } from '../archival/schedule.js';
import { embeddingSetup } from '../embedding/load.js';
import { buildArchiver, buildCompaction, buildEmbedders, needsDurable, openDurable, openQueueAndShortTerm, openSemantic, prepareTokenizer, type DurableParts } from './build.js';

export interface WorkerOptions {
  /** the queues to consume */
  queues: readonly QueueName[];
  /** jobs per queue at once (default worker_concurrency) */
  concurrency?: number;
  logger: Logger;
  /** loads the embedder instead of `embedding_model` (tests) */
  loadEmbedder?: () => Promise<Embedder>;
}

/** A worker consuming its queues; `close` hands back what is still running and releases everything. */
export interface RunningWorker {
  queues: readonly QueueName[];
  concurrency: number;
  /** whether this worker opened the durable store (an embed-only worker with Qdrant does not) */
  durable: boolean;
  backends(): Pick<BackendReports, 'queue' | 'semantic' | 'embedder'> & { long_term?: BackendReports['long_term'] };
  close(): Promise<void>;
}

/**
 * The composition root of a worker process (`neuralcleave worker`, docs/architecture.md, composition
 * roots): the shared BullMQ queues (Redis required — a worker without them would consume nothing
 * anyone else enqueues, so no Redis is a ConfigError, exit 2) and only what the chosen queues' processors use.
 * The durable store is opened only when a processor needs it: `persist`, `compact` and `archive`
 * write it, and `embed` needs it only for the embedded index; `embed` with Qdrant runs without it
 * and checks deletions through the tombstones in Redis. With the store it also runs the reconciler
 * (pending turns re-enqueued), as `serve` does.
 */
export async function startWorker(config: Config, options: WorkerOptions): Promise<RunningWorker> {
  const log = options.logger;
  const queues = options.queues;
  const concurrency = options.concurrency ?? config.worker_concurrency;
  // the embedding settings are checked before anything is opened: privacy mode with an embedding
  // server off this machine, or the OpenAI API without a key, is a ConfigError (exit 2)
  const embedding = embeddingSetup(config);
  const redis = await openQueueAndShortTerm(config, log, { required: true });
  let durable: DurableParts | null = null;
  const closers: Array<() => Promise<void>> = [];
  try {
    durable = needsDurable(queues, config) ? await openDurable(config, log) : null;
    const { shortTerm, queue, tombstones } = redis;
    const semantic = await openSemantic(config, durable, log);
    const vectors = semantic.index;
    const embedders = buildEmbedders(config, embedding, log, options.loadEmbedder);
    closers.push(() => queue.close(), () => Promise.allSettled([shortTerm.close(), vectors.close(), embedders.close()]).then(() => undefined));

    const deps: ProcessorDepsByQueue = {};
    const workerLog = log.child({ component: 'worker' });
    if (queues.includes('embed')) {
      deps.embed = durable ? { log: workerLog, embedders, vectors, turnLog: durable.turnLog, longTerm: durable.longTerm } : { log: workerLog, embedders, vectors, tombstones };
    }
    if (durable) {
      const { turnLog, longTerm } = durable;
      // compaction and the reconciler write the short-term tier: checked against the turn log (see ShortTermGuard)
      const shortTerm = new ShortTermGuard(redis.shortTerm, turnLog, log.child({ component: 'short-term' }));
      if (queues.includes('persist')) deps.persist = { turnLog, longTerm, importanceThreshold: config.importance_threshold };
      if (queues.includes('compact') || queues.includes('archive')) {
        prepareTokenizer(log);
        const tokens = new TokenCounter();
        const llm = selectLlm(config, log.child({ component: 'llm' }));
        if (queues.includes('compact')) deps.compact = buildCompaction(config, { shortTerm, turnLog, longTerm, queue, tokens, llm, log });
        if (queues.includes('archive')) deps.archive = { archiver: buildArchiver(config, { durable, shortTerm, vectors, queue, embedders, tokens, llm, log }) };
      }
      // the pending turns of the file this worker holds are re-enqueued here too (a fleet of workers
      // with no serve running still finishes every turn)
      const writePath = new WritePath({ schema: turnInputSchema(config.max_turn_chars), turnLog, shortTerm, queue, log: log.child({ component: 'write-path' }) });
      const reconciler = new Reconciler({ turnLog, writePath, vectors, embedders, shortTerm, log: log.child({ component: 'reconciler' }) });
      reconciler.start(config.reconcile_interval_s * 1000, config.reconcile_after_s * 1000);
      closers.unshift(() => reconciler.stop());
    }
    await queue.consume(processorsFor(deps), { queues, concurrency });
    // every worker upserts the same BullMQ job scheduler: one job per occurrence however many run
    if (deps.archive) await scheduleArchival(queue, config, log.child({ component: 'archival' }));

    let closed = false;
    const opened = durable;
    return {
      queues,
      concurrency,
      durable: opened !== null,
      backends: () => ({
        queue: redis.reports().queue,
        semantic: semantic.report,
        ...(opened ? { long_term: opened.report } : {}),
        embedder: embedders.report(),
      }),
      async close() {
        if (closed) return;
        closed = true;
        for (const close of closers) await close();
        await redis.close();
        await opened?.close();
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    await redis.close();
    await durable?.close();
    throw err;
  }
}

/**
 * The worker process: starts the worker, says so on stderr (the line scripts and tests wait for),
 * and on SIGTERM/SIGINT finishes its in-flight jobs (handing back what is still running after
 * worker_shutdown_timeout_ms) before it exits. Resolves once it has shut down.
 */
export async function runWorkerProcess(config: Config, options: { queues: readonly QueueName[]; concurrency?: number }, log: Logger): Promise<void> {
  const worker = await startWorker(config, { ...options, logger: log });
  const backends = worker.backends();
  log.info({ queues: worker.queues, concurrency: worker.concurrency, durable_store: backends.long_term?.detail ?? null, semantic: backends.semantic.backend }, 'worker consuming');
  process.stderr.write(`worker ready: consuming ${worker.queues.join(',') || 'nothing'} (concurrency ${worker.concurrency}); pid ${process.pid}\n`);
  await onShutdown(log, () => worker.close());
  log.info('worker stopped');
  // a library timer left behind must not keep a stopped worker alive (an orchestrator would SIGKILL it)
  setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
}

/** `node dist/workers/main.js`: a worker on every queue, configured from neuralcleave.toml and NEURALCLEAVE_* variables. */
export async function workerMain(): Promise<void> {
  try {
    const config = loadConfig();
    await runWorkerProcess(config, { queues: [...QUEUE_NAMES] }, createLogger(config.log_level));
  } catch (err) {
    process.stderr.write(`neuralcleave worker: ${(err as Error).message}\n`);
    // bad configuration (no Redis, no Qdrant for a worker without the SQLite file) exits 2, as the CLI's does
    process.exitCode = err instanceof ConfigError ? 2 : 1;
  }
}
