import type { EmbedderProvider } from './embedding/provider.js';
import type { DurableStore } from './ports/durable-store.js';
import type { ShortTermStore } from './ports/short-term.js';
import type { TurnLog } from './ports/turn-log.js';
import type { VectorIndex } from './ports/vector-index.js';
import type { JobQueue } from '../queues/queue.js';
import type { BackendReport, BackendReports } from './backends.js';
import type { TurnLogCounts } from './ports/turn-log.js';
import { SERVER_WAY_OUT, wayOut } from './embedding/provider.js';
import { DISK_FULL_BELOW_BYTES } from './errors.js';

export type HealthStatus = 'ok' | 'degraded' | 'down';

/** What a health report probes. */
export interface HealthDeps {
  store: Pick<DurableStore, 'maintenance' | 'kind' | 'where'>;
  turnLog: Pick<TurnLog, 'counts'>;
  shortTerm: Pick<ShortTermStore, 'ping'>;
  vectors: Pick<VectorIndex, 'ping'>;
  queue: Pick<JobQueue, 'counts'>;
  embedders: EmbedderProvider;
  backends(): BackendReports;
}

/** A part that is not `ok`: what that means and what to do, the same text in `/health` and `doctor`. */
export interface HealthProblem {
  part: string;
  state: BackendReport['state'];
  advice: string;
}

/** Fixed texts (no hosts, paths or error messages), so the public `/health` may show them too. */
function adviceFor(part: string, state: BackendReport['state'], backends: BackendReports, provider: string): string {
  if (part === 'embedder') {
    if (state === 'loading') return 'the embedding model is still loading; the semantic tier is skipped until it is ready';
    if (state === 'down') return `the embedding server does not answer, so the semantic tier is skipped: ${SERVER_WAY_OUT}`;
    return `the embedding model could not be loaded, so the semantic tier is skipped: ${wayOut(provider)}`;
  }
  if (part === 'semantic' && (state === 'failed' || state === 'loading' || (state === 'down' && backends.embedder.state === 'down'))) {
    return 'no embedder is loaded or answering (see embedder): short-term and long-term retrieval go on';
  }
  if (state === 'fallback') {
    return part === 'semantic'
      ? 'Qdrant is configured but not reachable: the embedded index is used instead; start Qdrant or unset qdrant_url'
      : `Redis is configured but not reachable: the in-process ${part === 'queue' ? 'queue' : 'short-term store'} is used instead; start Redis or unset redis_url`;
  }
  if (part === 'long_term' && state === 'failed') {
    return 'the disk holding the SQLite file is full: writes and deletes answer 507 insufficient_storage and write nothing (every turn acknowledged before is kept); free space on that disk, or stop the service and move sqlite_path to a larger one';
  }
  if (part === 'long_term') {
    return backends.long_term.backend === 'postgres'
      ? 'the PostgreSQL database (database_url) does not answer: turns cannot be made durable until it does; check that it runs and that this host reaches it'
      : 'the SQLite file does not answer: turns cannot be made durable';
  }
  return `${part} (${backends[part as keyof BackendReports]?.backend ?? part}) does not answer`;
}

/**
 * What `/health` and `doctor` report: liveness, each part's backend and state, queue depths, the
 * embedder and the turn log's backlog. `down` means writes cannot be made durable (the SQLite file or
 * the PostgreSQL database does not answer); `degraded` means some part is on a fallback, loading, failed or unreachable, while
 * writes and retrieval still work.
 */
export async function healthReport(s: HealthDeps, options: { turnLogCounts?: boolean } = {}) {
  const [queues, shortTermUp, vectorsUp] = await Promise.all([
    s.queue.counts().catch(() => null),
    s.shortTerm.ping().catch(() => false),
    s.vectors.ping().catch(() => false),
  ]);
  const backends = s.backends();
  if (!shortTermUp) backends.short_term = { ...backends.short_term, state: 'down' };
  if (!vectorsUp) backends.semantic = { ...backends.semantic, state: 'down' };
  let turnLog: TurnLogCounts | null = null;
  try {
    // counting scans the turn log; a probe that does not show the counts only checks the store answers
    if (options.turnLogCounts ?? true) turnLog = await s.turnLog.counts();
    else await s.store.maintenance.ping();
  } catch (err) {
    backends.long_term = { ...backends.long_term, state: 'down', detail: (err as Error).message };
  }
  if (backends.long_term.state !== 'down') {
    // a full disk answers reads and refuses every write: degraded, with the way out (adviceFor)
    const space = await s.store.maintenance.freeSpace().catch(() => null);
    if (space && space.bytes < DISK_FULL_BELOW_BYTES) {
      backends.long_term = { ...backends.long_term, state: 'failed', detail: `the disk holding ${space.path} is full (${space.bytes} bytes free)` };
    }
  }
  if (!queues) backends.queue = { ...backends.queue, state: 'down' };
  // a semantic backend that answers is no use without an embedder: one verdict, not "ok" beside "failed"
  if (backends.semantic.state === 'ok' && s.embedders.status !== 'ready') {
    const state = s.embedders.status === 'unavailable' ? 'down' : s.embedders.status;
    backends.semantic = { ...backends.semantic, state, detail: state === 'down' ? 'the embedding server does not answer: searched once it does' : 'no embedder loaded: searched once one is' };
  }
  const status: HealthStatus =
    backends.long_term.state === 'down' ? 'down' : Object.values(backends).some((b) => b.state !== 'ok') ? 'degraded' : 'ok';
  const problems: HealthProblem[] = Object.entries(backends)
    .filter(([, b]) => b.state !== 'ok')
    .map(([part, b]) => ({ part, state: b.state, advice: adviceFor(part, b.state, backends, s.embedders.provider) }))
    // a cause before what it causes: the embedder before the semantic tier it leaves idle
    .sort((a, b) => Number(b.part === 'embedder') - Number(a.part === 'embedder'));
  const embedder = s.embedders.current();
  return {
    status,
    problems,
    backends,
    embedder: {
      provider: s.embedders.provider,
      model: s.embedders.model,
      status: s.embedders.status,
      id: embedder?.id ?? null,
      dim: embedder?.dim ?? null,
      ...(s.embedders.error ? { error: s.embedders.error } : {}),
    },
    // where the durable store is: the file, or the database URL without its password
    ...(s.store.kind === 'postgres' ? { database_url: s.store.where } : { sqlite_path: s.store.where }),
    queues: queues ?? ({} as Partial<NonNullable<typeof queues>>),
    turn_log: turnLog ?? { total: 0, pending_embed: 0, pending_persist: 0 },
  };
}

export type HealthReport = Awaited<ReturnType<typeof healthReport>>;

/**
 * The part of the report anyone may read without a key: states and depths, no file paths, no error
 * texts (they can hold hosts and URLs), no counts of what is stored.
 */
export function publicHealth(r: HealthReport) {
  const backends: Record<string, Omit<BackendReport, 'detail'>> = {};
  for (const [part, b] of Object.entries(r.backends)) backends[part] = { backend: b.backend, state: b.state };
  return {
    status: r.status,
    problems: r.problems,
    backends,
    embedder: { provider: r.embedder.provider, model: r.embedder.model, status: r.embedder.status, id: r.embedder.id, dim: r.embedder.dim },
    queues: r.queues,
  };
}
