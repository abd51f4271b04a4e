import type { BackendReport } from '../../backends.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import { ConfigError } from '../../errors.js';
import type { VectorIndex } from '../../ports/vector-index.js';
import { QdrantVectorIndex, redactUrl as redact } from './vector-index.js';

export type SemanticConfig = Pick<
  Config,
  'qdrant_url' | 'qdrant_api_key' | 'qdrant_collection_prefix' | 'qdrant_timeout_ms' | 'qdrant_connect_timeout_ms' | 'semantic_budget_ms' | 'sqlite_path' | 'database_url'
>;

export interface OpenedVectorIndex {
  index: VectorIndex;
  /** what doctor and /health show for the semantic tier */
  report: BackendReport;
}

/**
 * The semantic tier's backend, decided once at start (docs/architecture.md, deployment and backends): Qdrant when `qdrant_url` is set and
 * answers, else the embedded index in the SQLite file. An unreachable Qdrant is a fallback — one
 * warning, and the report says why; an unset `qdrant_url` is the embedded default, not a fault.
 * A Qdrant that goes away later is handled per call: retrieval skips the tier past its budget.
 * `embedded` is null in a process without the durable store: there an unreachable Qdrant is a
 * ConfigError, not a fallback.
 */
export async function openVectorIndex(config: SemanticConfig, embedded: (() => VectorIndex) | null, log: Logger): Promise<OpenedVectorIndex> {
  if (!config.qdrant_url) {
    if (!embedded) throw new ConfigError('qdrant_url is not set, and this process holds no SQLite file for the embedded index', [{ path: 'qdrant_url', message: 'not set' }]);
    return { index: embedded(), report: { backend: 'embedded', state: 'ok', detail: `qdrant_url not set; vectors in ${config.database_url ? redact(config.database_url) : config.sqlite_path}` } };
  }
  try {
    const index = await QdrantVectorIndex.connect({
      url: config.qdrant_url,
      apiKey: config.qdrant_api_key,
      prefix: config.qdrant_collection_prefix,
      timeoutMs: config.qdrant_timeout_ms,
      // a search nobody answers is dropped at the retrieval budget; free its connection soon after
      searchTimeoutMs: config.semantic_budget_ms * 2,
      connectTimeoutMs: config.qdrant_connect_timeout_ms,
      log,
    });
    return { index, report: { backend: 'qdrant', state: 'ok', detail: `${redact(config.qdrant_url)} (Qdrant ${index.serverVersion})` } };
  } catch (err) {
    const reason = (err as Error).message;
    if (!embedded) throw new ConfigError(`Qdrant at ${redact(config.qdrant_url)} is not reachable (${reason}), and this process holds no SQLite file for the embedded index`, [{ path: 'qdrant_url', message: reason }]);
    log.warn({ qdrant_url: redact(config.qdrant_url), err: reason }, 'Qdrant is not reachable; the semantic tier uses the embedded index in the SQLite file');
    return { index: embedded(), report: { backend: 'embedded', state: 'fallback', detail: reason } };
  }
}
