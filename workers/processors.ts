import type { ProcessorMap } from '../queues/queue.js';
import { processArchive, type ArchiveDeps } from './archive.js';
import { processCompact, type CompactDeps } from './compact.js';
import { processEmbedBatch, type EmbedDeps } from './embed.js';
import { processPersistBatch, type PersistDeps } from './persist.js';

export type { ArchiveDeps, CompactDeps, EmbedDeps, PersistDeps };

/** Each queue's processor dependencies; a queue left out gets no processor. */
export interface ProcessorDepsByQueue {
  embed?: EmbedDeps;
  persist?: PersistDeps;
  compact?: CompactDeps;
  archive?: ArchiveDeps;
}

/** What every processor needs at once: a process that runs all four (serve with the in-process queue). */
export type ProcessorDeps = EmbedDeps & PersistDeps & CompactDeps & ArchiveDeps;

/**
 * Jobs per call of the batched processors (embed, persist); the queue hands a batch at most as many as
 * it runs at once (worker_concurrency). One transaction for the batch instead of one per few jobs is
 * what brings ingest near a bare batched insert (docs/bench-report.md).
 */
export const MAX_BATCH = 512;

/** The processors of the queues given dependencies, each bound to its own; embed and persist take batches. */
export function processorsFor(deps: ProcessorDepsByQueue): ProcessorMap {
  const out: ProcessorMap = {};
  const { embed, persist, compact, archive } = deps;
  if (embed) out.embed = { maxBatch: MAX_BATCH, batch: (jobs) => processEmbedBatch(jobs.map((j) => j.data), embed) };
  if (persist) out.persist = { maxBatch: MAX_BATCH, batch: (jobs) => processPersistBatch(jobs.map((j) => j.data), persist) };
  if (compact) out.compact = (data) => processCompact(data, compact);
  if (archive) out.archive = (data, meta) => processArchive(data, meta, archive);
  return out;
}

/** The processor of each queue, bound to its dependencies. */
export function createProcessors(deps: ProcessorDeps, extra: ProcessorMap = {}): ProcessorMap {
  return { ...processorsFor({ embed: deps, persist: deps, compact: deps, archive: deps }), ...extra };
}
