import { InProcessQueue } from '../queues/in-process.js';
import type { JobQueue } from '../queues/queue.js';
import { createProcessors, observeProcessors, type JobEvent } from '../workers/processors.js';
import type { ProcessorDeps } from '../workers/deps.js';
import type { BackendReports } from './backends.js';
import type { Config } from './config/schema.js';
import type { Tier } from './domain/entry.js';
import { turnInputSchema } from './domain/turn.js';
import { loadEmbedder } from './embedding/load.js';
import { EmbedderProvider } from './embedding/provider.js';
import { createLogger, type Logger } from './logger.js';
import { Reconciler } from './memory/reconciler.js';
import { WritePath } from './memory/write-path.js';
import { Retriever, type TierReport } from './retrieval/retrieve.js';
import { EmbeddedVectorIndex } from './tiers/embedded/vector-index.js';
import { InProcessShortTermStore } from './tiers/memory/short-term.js';
import type { ShortTermStore } from './tiers/short-term.js';
import { openDatabase, type Db } from './tiers/sqlite/db.js';
import { SqliteLongTermStore } from './tiers/sqlite/long-term.js';
import { TurnLog } from './tiers/sqlite/turn-log.js';
import type { VectorIndex } from './tiers/vector-index.js';

/** Listeners on what the services do (the API's /metrics subscribes); per wiring, nothing global. */
export interface ServiceEvents {
  /** one call per tier per retrieval */
  tier: Set<(tier: Tier, report: TierReport) => void>;
  /** one call per processor run in this process */
  job: Set<(event: JobEvent) => void>;
}

/** Everything one process wires together from its config; nothing here is global. */
export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  turnLog: TurnLog;
  longTerm: SqliteLongTermStore;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  embedders: EmbedderProvider;
  writePath: WritePath;
  retriever: Retriever;
  reconciler: Reconciler;
  processorDeps: ProcessorDeps;
  events: ServiceEvents;
  /** which backend serves each part right now */
  backends(): BackendReports;
  close(): Promise<void>;
}

export interface WireOptions {
  logger?: Logger;
  /** run the processors in this process (default: when the queue is in-process) */
  runWorkers?: boolean;
  /** re-enqueue unfinished turns at start-up and periodically (default true) */
  reconcile?: boolean;
}

/**
 * Wiring: config → backends (falling back to the embedded defaults, with one warning each) →
 * services. The CLI, the HTTP server, the workers and library callers all start here.
 */
export async function wire(config: Config, options: WireOptions = {}): Promise<Services> {
  const log = options.logger ?? createLogger(config.log_level);
  const db = openDatabase(config.sqlite_path);
  const turnLog = new TurnLog(db);
  const longTerm = new SqliteLongTermStore(db);

  const shortTerm: ShortTermStore = new InProcessShortTermStore({ ttlSeconds: config.short_term_ttl_s, maxTurns: config.short_term_max_turns });
  const queue: JobQueue = new InProcessQueue(log.child({ component: 'queue' }));
  const vectors: VectorIndex = new EmbeddedVectorIndex(db);

  const embedders = new EmbedderProvider(config.embedding_model, () => loadEmbedder(config), log.child({ component: 'embedder' }));

  const writePath = new WritePath({
    schema: turnInputSchema(config.max_turn_chars),
    turnLog,
    shortTerm,
    queue,
    log: log.child({ component: 'write-path' }),
  });
  const events: ServiceEvents = { tier: new Set(), job: new Set() };
  const retriever = new Retriever({
    shortTerm,
    vectors,
    longTerm,
    embedders,
    log: log.child({ component: 'retrieval' }),
    budgets: { short_term: config.short_term_budget_ms, semantic: config.semantic_budget_ms, long_term: config.long_term_budget_ms },
    onTier: (tier, report) => events.tier.forEach((listener) => listener(tier, report)),
  });
  const processorDeps: ProcessorDeps = {
    log: log.child({ component: 'worker' }),
    embedders,
    vectors,
    turnLog,
    longTerm,
    importanceThreshold: config.importance_threshold,
  };
  const reconciler = new Reconciler({ turnLog, writePath, vectors, embedders, log: log.child({ component: 'reconciler' }) });

  if (options.runWorkers ?? queue.backend === 'in-process') {
    const observed = observeProcessors(createProcessors(processorDeps), (e) => events.job.forEach((listener) => listener(e)));
    await queue.consume(observed, { queues: ['embed', 'persist'], concurrency: config.worker_concurrency });
  }
  if (options.reconcile ?? true) {
    // start-up passes over everything pending, whenever it was accepted: now, and again once the
    // embedder has loaded (a model download must not hold up start-up)
    reconciler.start(config.reconcile_interval_s * 1000, config.reconcile_after_s * 1000);
    void embedders.ready().then((e) => (e ? reconciler.run(Date.now()) : 0));
  }

  const fallbacks: Partial<BackendReports> = {};
  const backends = (): BackendReports => ({
    short_term: fallbacks.short_term ?? { backend: shortTerm.backend, state: 'ok' },
    semantic: fallbacks.semantic ?? { backend: vectors.backend, state: 'ok' },
    long_term: { backend: 'sqlite', state: 'ok', detail: config.sqlite_path },
    queue: fallbacks.queue ?? { backend: queue.backend, state: 'ok' },
    embedder: {
      backend: embedders.current()?.id ?? config.embedding_model,
      state: embedders.status === 'ready' ? 'ok' : embedders.status,
      ...(embedders.error ? { detail: embedders.error } : {}),
    },
  });

  let closed = false;
  return {
    config, log, db, turnLog, longTerm, shortTerm, vectors, queue, embedders, writePath, retriever, reconciler, processorDeps, events, backends,
    async close() {
      if (closed) return;
      closed = true;
      await reconciler.stop();
      await queue.close();
      await Promise.allSettled([shortTerm.close(), vectors.close(), embedders.close()]);
      db.close();
    },
  };
}
