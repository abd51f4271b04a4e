import type { QueueName } from '../../queues/names.js';
import type { JobQueue } from '../../queues/queue.js';
import type { BackendReport } from '../backends.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Embedder } from '../ports/embedder.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { VectorIndex } from '../ports/vector-index.js';
import { loadEmbedder, type EmbeddingSetup } from '../embedding/load.js';
import { EmbedderProvider } from '../embedding/provider.js';
import { openVectorIndex, type OpenedVectorIndex } from '../adapters/qdrant/open.js';
import { openRedisBackends, type OpenedRedis } from '../adapters/redis/open.js';
import type { Db } from '../adapters/sqlite/db.js';
import { mappingErrors } from '../adapters/sqlite/errors.js';
import { openSqliteStore } from '../adapters/sqlite/open.js';
import { EmbeddedVectorIndex } from '../adapters/embedded/vector-index.js';
import { SqliteVectorStore } from '../adapters/embedded/rows.js';
import { openPostgresStore } from '../adapters/postgres/open.js';
import type { ArchiveStore } from '../ports/archive-store.js';
import type { DurableStore } from '../ports/durable-store.js';
import { AutoCompactor } from '../compaction/auto.js';
import { ConversationCompactor } from '../compaction/compactor.js';
import { createSummarizer } from '../compaction/summarizers/select.js';
import type { TokenCounter } from '../compaction/tokens.js';
import { loadRanks } from '../compaction/cl100k.js';
import type { LlmSelection } from '../llm/select.js';
import { Archiver } from '../archival/archiver.js';
import { archiveSummarizer } from '../archival/summarize.js';
import type { TurnLog } from '../ports/turn-log.js';
import type { LongTermStore } from '../ports/long-term.js';

/**
 * The small builders the composition roots share (docs/architecture.md, composition roots): each root
 * calls the ones its process uses, and nothing else is built.
 */

/** The durable store of this process (the SQLite file, or PostgreSQL when database_url is set) and its parts. */
export interface DurableParts {
  /** the durable store's ports (turn log, long-term, archives, erasure, maintenance, exchange) */
  store: DurableStore;
  /** the SQLite file's handle (tests read the file); null on PostgreSQL */
  db: Db | null;
  turnLog: TurnLog;
  longTerm: LongTermStore;
  archives: ArchiveStore;
  /** the embedded vector index over the same file (built once, on first use) */
  embeddedVectors(): VectorIndex;
  report: BackendReport;
  close(): Promise<void>;
}

/**
 * Opens the durable store: PostgreSQL when `database_url` is set (a database that does not answer is
 * a ConfigError: no fallback, and no SQLite file is created), else the SQLite file of `sqlite_path`
 * (created when needed). The embedded vector index keeps its vectors in the same store.
 */
export async function openDurable(
  config: Pick<Config, 'sqlite_path' | 'database_url' | 'database_pool_max' | 'database_statement_timeout_ms' | 'database_connect_timeout_ms'>,
  log?: Logger,
): Promise<DurableParts> {
  let embedded: VectorIndex | null = null;
  if (config.database_url) {
    const store = await openPostgresStore(config.database_url, log, {
      max: config.database_pool_max,
      statementTimeoutMs: config.database_statement_timeout_ms,
      connectTimeoutMs: config.database_connect_timeout_ms,
    });
    return {
      store,
      db: null,
      turnLog: store.turnLog,
      longTerm: store.longTerm,
      archives: store.archives,
      embeddedVectors: () => (embedded ??= new EmbeddedVectorIndex(store.vectorRows)),
      report: { backend: 'postgres', state: 'ok', detail: store.where },
      close: () => store.close(),
    };
  }
  const store = await openSqliteStore(config.sqlite_path, log);
  return {
    store,
    db: store.db,
    turnLog: store.turnLog,
    longTerm: store.longTerm,
    archives: store.archives,
    // on the same file: its driver errors are mapped as the store's parts' are (a busy file is a 503)
    embeddedVectors: () => (embedded ??= mappingErrors(new EmbeddedVectorIndex(new SqliteVectorStore(store.db, store.db.name, store.writes)))),
    report: { backend: 'sqlite', state: 'ok', detail: config.sqlite_path },
    close: () => store.close(),
  };
}

/**
 * The queue and the short-term tier (Redis, else in-process), or the primary's when an HTTP process
 * of `serve --processes N` borrows them. `required`: no Redis is a ConfigError (a worker process).
 */
export async function openQueueAndShortTerm(config: Config, log: Logger, options: { required?: boolean; lent?: LentBackends } = {}): Promise<OpenedRedis> {
  if (options.lent) return lentBackends(options.lent);
  return openRedisBackends(config, log, { required: options.required ?? false });
}

/** what an HTTP process of `serve --processes N` uses of the primary's when there is no Redis */
export interface LentBackends {
  shortTerm: ShortTermStore;
  queue: JobQueue;
  reports: { queue: BackendReport; short_term: BackendReport };
}

/** The primary's backends as an HTTP process of `serve --processes N` sees them, reported as the primary reports them. */
function lentBackends(shared: LentBackends): OpenedRedis {
  const held = (r: BackendReport): BackendReport => ({ ...r, detail: `${r.detail ?? r.backend}; held by the serve primary process` });
  return {
    shortTerm: shared.shortTerm,
    queue: shared.queue,
    tombstones: null,
    connection: null,
    reports: () => ({ queue: held(shared.reports.queue), short_term: held(shared.reports.short_term) }),
    close: async () => {},
  };
}

/**
 * The semantic tier: Qdrant when configured and reachable, else the embedded index in the durable
 * store's file. A process without the durable store (an embed-only worker) has no fallback: Qdrant
 * unset or unreachable is a ConfigError, rather than vectors written to a file nobody reads.
 */
export async function openSemantic(config: Config, durable: DurableParts | null, log: Logger): Promise<OpenedVectorIndex> {
  return openVectorIndex(config, durable ? () => durable.embeddedVectors() : null, log.child({ component: 'semantic' }));
}

/** The embedder, loading in the background, as `embeddingSetup` resolved it (checked before anything was opened). */
export function buildEmbedders(config: Config, setup: EmbeddingSetup, log: Logger, load?: () => Promise<Embedder>): EmbedderProvider {
  return new EmbedderProvider(setup.model, load ?? (() => loadEmbedder(config)), log.child({ component: 'embedder' }), {
    provider: setup.provider,
    maxBatch: setup.url === null ? 32 : config.embedding_batch_size,
  });
}

/**
 * Builds the token counter's rank table before the process answers anything: the first /chat (its
 * prompt budget) or compaction would otherwise build it, 100–300 ms with every other request waiting
 * (issue 25: the first 32,000-character /chat of the tokens bench held /health 0.5–1.5 s).
 */
export function prepareTokenizer(log: Logger): void {
  const started = performance.now();
  loadRanks();
  log.debug({ ms: Math.round(performance.now() - started) }, 'token counter ready');
}

/** the token limit past which a session is compacted */
export function compactionLimit(config: Config): number {
  return Math.floor(config.compaction_threshold * config.context_window);
}

/** Compaction of sessions, and its check after each accepted reply. */
export function buildCompaction(
  config: Config,
  deps: { shortTerm: ShortTermStore; turnLog: TurnLog; longTerm: LongTermStore; queue: JobQueue; tokens: TokenCounter; llm: LlmSelection; log: Logger },
): { compactor: ConversationCompactor; autoCompaction: AutoCompactor } {
  const { shortTerm, turnLog, longTerm, queue, tokens, llm, log } = deps;
  const limitTokens = compactionLimit(config);
  const autoCompaction = new AutoCompactor({ shortTerm, queue, tokens, log: log.child({ component: 'auto-compaction' }), limitTokens });
  const compactor = new ConversationCompactor({
    shortTerm,
    turnLog,
    longTerm,
    queue,
    tokens,
    summarizer: createSummarizer(config, llm.provider, tokens, log.child({ component: 'summarizer' })),
    log: log.child({ component: 'compaction' }),
    keepTurns: config.compaction_keep_turns,
    summaryMaxTokens: config.summary_max_tokens,
    limitTokens,
    maxChars: config.max_turn_chars,
  });
  compactor.onSettled((userId, sessionId) => autoCompaction.release(userId, sessionId));
  return { compactor, autoCompaction };
}

/** Archival of inactive sessions over the durable store. */
export function buildArchiver(
  config: Config,
  deps: { durable: DurableParts; shortTerm: ShortTermStore; vectors: VectorIndex; queue: JobQueue; embedders: EmbedderProvider; tokens: TokenCounter; llm: LlmSelection; log: Logger },
): Archiver {
  const { durable, shortTerm, vectors, queue, embedders, tokens, llm, log } = deps;
  return new Archiver({
    store: durable.archives,
    shortTerm,
    vectors,
    queue,
    embedders,
    // the same summarizers as compaction (an instance of its own, for its own fallback count)
    summarizer: archiveSummarizer(createSummarizer(config, llm.provider, tokens, log.child({ component: 'summarizer' })), config.summary_max_tokens, config.max_turn_chars),
    log: log.child({ component: 'archival' }),
    inactiveDays: config.archival_inactive_days,
    textIndex: durable.longTerm,
  });
}

/** Queues whose processor needs the durable store; `embed` needs it only for the embedded index (no Qdrant). */
export function needsDurable(queues: readonly QueueName[], config: Pick<Config, 'qdrant_url' | 'database_url'>): boolean {
  // on PostgreSQL every host reaches the turn log: embed workers check it too
  return queues.some((q) => q !== 'embed') || (queues.includes('embed') && (!config.qdrant_url || config.database_url !== undefined));
}
