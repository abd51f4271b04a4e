import type { EmbedJob } from '../queues/payloads.js';
import type { EmbedderProvider } from '../src/embedding/provider.js';
import type { Logger } from '../src/logger.js';
import type { LongTermStore } from '../src/ports/long-term.js';
import type { Tombstones } from '../src/ports/tombstones.js';
import type { TurnLog } from '../src/ports/turn-log.js';
import type { VectorIndex, VectorPayload } from '../src/ports/vector-index.js';

/**
 * What the embed processor needs. With the durable store (`turnLog`, `longTerm`) it checks the memory
 * there; without it (a worker on a host without the SQLite file, vectors in Qdrant) it checks the
 * tombstones of the shared Redis instead (docs/architecture.md, embed workers without the durable store).
 */
export interface EmbedDeps {
  log: Logger;
  embedders: Pick<EmbedderProvider, 'ready' | 'model'>;
  vectors: Pick<VectorIndex, 'upsert' | 'delete'>;
  turnLog?: Pick<TurnLog, 'get' | 'markEmbedded'>;
  longTerm?: Pick<LongTermStore, 'get'>;
  tombstones?: Pick<Tombstones, 'isBuried'> | null;
}

/** a memory edited again and again while it is embedded is followed this many times, then left to the reconciler */
const ROUNDS = 3;

/**
 * Embeds one turn and upserts its vector, tagged with the embedder. Concurrent jobs share model calls
 * through the batching embedder. Idempotent: the upsert is keyed by (user, turn id).
 *
 * After its write the job reads the memory again: deleted meanwhile, it removes the vector it wrote
 * (the delete may have run before the write); edited meanwhile, it embeds the new text and writes
 * that instead — never deleting, since the edit's own job may already have written the new vector,
 * which a delete here would remove for good.
 */
export async function processEmbed(job: EmbedJob, deps: EmbedDeps): Promise<{ embedder: string } | { skipped: string }> {
  const embedder = await deps.embedders.ready();
  // No model on this worker: the turn stays un-embedded in the turn log (the semantic tier is skipped,
  // docs/architecture.md, embeddings) rather than failing the job over and over; `memory reindex` embeds it once a model loads.
  if (!embedder) return { skipped: `embedding model "${deps.embedders.model}" is not loaded` };
  if ((await current(job, deps))?.content_hash !== job.content_hash) return { skipped: 'deleted or edited since it was enqueued' };
  let payload: VectorPayload = {
    user_id: job.user_id,
    session_id: job.session_id,
    role: job.role,
    name: job.name,
    kind: job.kind,
    content: job.content,
    content_hash: job.content_hash,
    created_at: job.created_at,
    metadata: job.metadata,
  };
  for (let round = 0; round < ROUNDS; round++) {
    const vector = await embedder.embedOne(payload.content);
    await deps.vectors.upsert(embedder, [{ id: job.turn_id, vector, payload }]);
    const now = await current(job, deps);
    if (!now) {
      await deps.vectors.delete(job.user_id, [job.turn_id]);
      return { skipped: 'deleted while it was embedded' };
    }
    if (now.content_hash === payload.content_hash) {
      if (deps.turnLog) await deps.turnLog.markEmbedded(job.user_id, [job.turn_id], embedder.id);
      return { embedder: embedder.id };
    }
    payload = now;
  }
  return { skipped: 'edited again while it was embedded; left to the edit\'s own job and the reconciler' };
}

/**
 * The memory as it is now (its vector payload), or null when it is gone. A worker on a host without
 * the durable store asks the tombstones: the job's text buried means gone; else the job is current
 * (the file's host records the embed when it finds the vector, see the reconciler).
 */
async function current(job: EmbedJob, deps: EmbedDeps): Promise<VectorPayload | null> {
  const fromJob: VectorPayload = { user_id: job.user_id, session_id: job.session_id, role: job.role, name: job.name, kind: job.kind, content: job.content, content_hash: job.content_hash, created_at: job.created_at, metadata: job.metadata };
  const elsewhere = async () => ((await deps.tombstones?.isBuried(job.user_id, job.turn_id, job.content_hash)) ? null : fromJob);
  if (job.kind === 'turn') {
    if (!deps.turnLog) return elsewhere();
    const t = await deps.turnLog.get(job.user_id, job.turn_id);
    return t ? { ...fromJob, session_id: t.session_id, role: t.role, name: t.name, content: t.content, content_hash: t.content_hash, created_at: t.created_at } : null;
  }
  if (!deps.longTerm) return elsewhere();
  const e = await deps.longTerm.get(job.user_id, job.turn_id);
  return e ? { ...fromJob, session_id: e.session_id, role: e.role, name: e.name, content: e.content, content_hash: e.content_hash, created_at: e.created_at, metadata: e.metadata } : null;
}
