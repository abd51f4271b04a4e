import type { QueueName } from '../../queues/names.js';
import type { JobQueue } from '../../queues/queue.js';
import { createProcessors, MAX_BATCH, type ProcessorDeps } from '../../workers/processors.js';
import { observeProcessors } from '../../queues/observe.js';
import type { ServiceEvents } from '../events.js';
import type { BackendReports } from '../backends.js';
import type { Config } from '../config/schema.js';
import type { Tier } from '../domain/entry.js';
import { turnInputSchema } from '../domain/turn.js';
import type { Embedder } from '../ports/embedder.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import { createLogger, type Logger } from '../logger.js';
import { ShortTermGuard } from '../memory/short-term-guard.js';
import { ErasureWatcher } from '../memory/forget.js';
import type { DurableStore } from '../ports/durable-store.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { TurnLog } from '../ports/turn-log.js';
import { Reconciler } from '../memory/reconciler.js';
import { WritePath, type WritePathDeps } from '../memory/write-path.js';
import { Retriever, type RetrieverDeps } from '../retrieval/retrieve.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { Tombstones } from '../ports/tombstones.js';
import type { Db } from '../adapters/sqlite/db.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { AutoCompactor } from '../compaction/auto.js';
import type { ConversationCompactor } from '../compaction/compactor.js';
import { TokenCounter } from '../compaction/tokens.js';
import { ChatPipeline } from '../chat/pipeline.js';
import { selectLlm, type LlmSelection } from '../llm/select.js';
import type { Archiver } from '../archival/archiver.js';
import { scheduleArchival } from '../archival/schedule.js';
import { embeddingSetup } from '../embedding/load.js';
import { buildArchiver, buildCompaction, buildEmbedders, openDurable, openQueueAndShortTerm, openSemantic, type LentBackends } from './build.js';

export type { ServiceEvents };

/** Everything one process wires together from its config; nothing here is global. */
export interface Services {
  config: Config;
  log: Logger;
  /** the durable store (turn log, long-term entries, archives, erasure, maintenance, export/import) */
  store: DurableStore;
  /** the SQLite file's handle (tests read the file); null when the store is PostgreSQL */
  db: Db | null;
  turnLog: TurnLog;
  longTerm: LongTermStore;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  /** marks of deleted texts for embed workers without the durable store (null: no Redis) */
  tombstones: Tombstones | null;
  embedders: EmbedderProvider;
  writePath: WritePath;
  retriever: Retriever;
  /** what the retriever was built from (the evaluation builds variants with signals switched off) */
  retrieverDeps: RetrieverDeps;
  reconciler: Reconciler;
  processorDeps: ProcessorDeps;
  events: ServiceEvents;
  /** retrieval passes that skipped a tier (over its budget, or failed), per tier, since start */
  skipped: Record<Tier, { timeout: number; error: number }>;
  /** token estimates (a real offline tokenizer) */
  tokens: TokenCounter;
  /** which LLM endpoint every call goes to (privacy mode decided here, once) */
  llm: LlmSelection;
  compactor: ConversationCompactor;
  /** the compaction check after each reply; `counters()` for metrics */
  autoCompaction: AutoCompactor;
  chat: ChatPipeline;
  /** archival of inactive sessions (docs/architecture.md, compaction and archival); the `archive` processor and `memory archive` run it */
  archiver: Archiver;
  /** which backend serves each part right now */
  backends(): BackendReports;
  close(): Promise<void>;
}

export interface WireOptions {
  logger?: Logger;
  /** run the processors in this process (default: when the queue is in-process) */
  runWorkers?: boolean;
  /** the queues this process consumes when it runs workers (default all four) */
  workerQueues?: readonly QueueName[];
  /** jobs per queue at once in this process (default worker_concurrency) */
  workerConcurrency?: number;
  /** fail (ConfigError) instead of falling back when Redis is not configured or reachable: a worker process */
  requireRedis?: boolean;
  /** re-enqueue unfinished turns at start-up and periodically (default true) */
  reconcile?: boolean;
  /** loads the embedder instead of `embedding_model` (tests, tools that embed with another model) */
  loadEmbedder?: () => Promise<Embedder>;
  /** check sessions for compaction after each accepted reply (default true; bulk imports may turn it off) */
  autoCompact?: boolean;
  /** register the archival schedule (archival_cron) on the queue: `serve` and `worker` do, other commands not */
  scheduleArchival?: boolean;
  /**
   * an HTTP process of `serve --processes N`: turns are accepted by the primary's write path, and
   * without Redis the short-term tier and the queue are the primary's, used instead of backends of
   * its own; erasures by other processes reach them in the primary
   */
  shared?: SharedBackends;
}

/** what an HTTP process of `serve --processes N` uses of the primary's (see WireOptions.shared) */
export interface SharedBackends {
  /** without Redis: the primary's short-term tier and queue */
  inProcess?: LentBackends;
  /** the primary's write path accepts the turns (WritePathDeps.acceptIn) */
  acceptIn: NonNullable<WritePathDeps['acceptIn']>;
}

/**
 * Wiring: config → backends (falling back to the embedded defaults, with one warning each) →
 * services. The CLI, the HTTP server, the workers and library callers all start here.
 */
export async function wire(config: Config, options: WireOptions = {}): Promise<Services> {
  const log = options.logger ?? createLogger(config.log_level);
  // the embedding settings are checked before anything is opened: privacy mode with an embedding
  // server off this machine, or the OpenAI API without a key, is a ConfigError (exit 2)
  const embedding = embeddingSetup(config);
  const durable = await openDurable(config, log);
  const { db, turnLog, longTerm } = durable;

  // BullMQ queues and the Redis short-term tier when Redis is configured and reachable, else in-process (one warning)
  const redis = await openQueueAndShortTerm(config, log, { required: options.requireRedis ?? false, ...(options.shared?.inProcess ? { lent: options.shared.inProcess } : {}) }).catch(
    async (err: unknown) => {
      await durable.close();
      throw err;
    },
  );
  const { queue, tombstones } = redis;
  // every short-term write checked against the turn log: no deleted turn comes back (see ShortTermGuard)
  const shortTerm = new ShortTermGuard(redis.shortTerm, turnLog, log.child({ component: 'short-term' }));
  // Qdrant when configured and reachable, else the embedded index (one warning)
  const semantic = await openSemantic(config, durable, log);
  const vectors: VectorIndex = semantic.index;

  const embedders = buildEmbedders(config, embedding, log, options.loadEmbedder);
  const tokens = new TokenCounter();
  const llm = selectLlm(config, log.child({ component: 'llm' }));
  const { compactor, autoCompaction } = buildCompaction(config, { shortTerm, turnLog, longTerm, queue, tokens, llm, log });
  const archiver = buildArchiver(config, { durable, shortTerm, vectors, queue, embedders, tokens, llm, log });

  const writePath = new WritePath({
    schema: turnInputSchema(config.max_turn_chars),
    turnLog,
    shortTerm,
    queue,
    log: log.child({ component: 'write-path' }),
    ...(options.autoCompact === false ? {} : { onAccepted: autoCompaction.onAccepted }),
    ...(options.shared ? { acceptIn: options.shared.acceptIn } : {}),
  });
  const events: ServiceEvents = { tier: new Set(), job: new Set() };
  const skipped = { short_term: { timeout: 0, error: 0 }, semantic: { timeout: 0, error: 0 }, long_term: { timeout: 0, error: 0 } };
  events.tier.add((tier, r) => {
    if (r.status === 'timeout' || r.status === 'error') skipped[tier][r.status]++;
  });
  const retrieverDeps: RetrieverDeps = {
    shortTerm,
    vectors,
    longTerm,
    embedders,
    log: log.child({ component: 'retrieval' }),
    budgets: { short_term: config.short_term_budget_ms, semantic: config.semantic_budget_ms, long_term: config.long_term_budget_ms },
    promptMinRelevance: config.prompt_min_relevance,
    context: turnLog,
    onTier: (tier, report) => events.tier.forEach((listener) => listener(tier, report)),
  };
  const retriever = new Retriever(retrieverDeps);
  const chat = new ChatPipeline({
    retriever,
    writePath,
    shortTerm,
    llm: llm.provider,
    tokens,
    log: log.child({ component: 'chat' }),
    contextWindow: config.context_window,
    maxTurnChars: config.max_turn_chars,
  });
  const processorDeps: ProcessorDeps = {
    log: log.child({ component: 'worker' }),
    embedders,
    vectors,
    turnLog,
    longTerm,
    importanceThreshold: config.importance_threshold,
    compactor,
    archiver,
    tombstones: null,
  };
  const reconciler = new Reconciler({ turnLog, writePath, vectors, embedders, shortTerm, log: log.child({ component: 'reconciler' }) });

  if (options.runWorkers ?? queue.backend === 'in-process') {
    const observed = observeProcessors(createProcessors(processorDeps), (e) => events.job.forEach((listener) => listener(e)));
    const queues = options.workerQueues ?? ['embed', 'persist', 'compact', 'archive'];
    const concurrency = options.workerConcurrency ?? config.worker_concurrency;
    // in this process a job costs only its payload, and embed and persist take their jobs in batches
    // (one transaction per batch): they run a whole batch at once, whatever the concurrency of the others
    const batched = queues.filter((q): boolean => q === 'embed' || q === 'persist');
    const others = queues.filter((q) => !batched.includes(q));
    if (batched.length > 0) await queue.consume(observed, { queues: batched, concurrency: queue.backend === 'in-process' ? Math.max(concurrency, MAX_BATCH) : concurrency });
    if (others.length > 0) await queue.consume(observed, { queues: others, concurrency });
    if (options.scheduleArchival) await scheduleArchival(queue, config, log.child({ component: 'archival' }));
  }
  if (options.reconcile ?? true) {
    // a start-up pass over everything pending, whenever it was accepted (its embeds once the model has
    // loaded: a download must not hold up start-up), then periodic passes
    reconciler.start(config.reconcile_interval_s * 1000, config.reconcile_after_s * 1000);
  }
  // state only this process holds (no Redis): erasures run by other processes (the CLI) reach it here
  const erasures = new ErasureWatcher({ store: durable.store, shortTerm, vectors, queue, log: log.child({ component: 'erasure' }) });
  if (!options.shared?.inProcess && (shortTerm.backend === 'memory' || queue.backend === 'in-process')) await erasures.start();

  const backends = (): BackendReports => ({
    short_term: redis.reports().short_term,
    semantic: semantic.report,
    long_term: durable.report,
    queue: redis.reports().queue,
    embedder: embedders.report(),
  });

  let closed = false;
  return {
    config, log, store: durable.store, db, turnLog, longTerm, shortTerm, vectors, queue, tombstones, embedders, writePath, retriever, retrieverDeps, reconciler, processorDeps, events, skipped, backends,
    tokens, llm, compactor, autoCompaction, chat, archiver,
    async close() {
      if (closed) return;
      closed = true;
      await reconciler.stop();
      await erasures.stop();
      // checks scheduled by the last replies enqueue before the queue closes
      await autoCompaction.idle();
      await queue.close();
      await Promise.allSettled([shortTerm.close(), vectors.close(), embedders.close()]);
      await redis.close();
      await durable.close();
    },
  };
}
