import type { EmbedJob } from '../queues/payloads.js';
import type { ProcessorDeps } from './deps.js';

/**
 * Embeds one turn and upserts its vector, tagged with the embedder. Concurrent jobs share model calls
 * through the batching embedder. Idempotent: the upsert is keyed by turn id.
 */
export async function processEmbed(job: EmbedJob, deps: ProcessorDeps): Promise<{ embedder: string } | { skipped: string }> {
  const embedder = await deps.embedders.ready();
  // No model on this worker: the turn stays un-embedded in the turn log (the semantic tier is skipped,
  // SPEC §5) rather than failing the job over and over; `memory reindex` embeds it once a model loads.
  if (!embedder) return { skipped: `embedding model "${deps.embedders.model}" is not loaded` };
  if ((await currentHash(job, deps)) !== job.content_hash) return { skipped: 'deleted or edited since it was enqueued' };
  const vector = await embedder.embedOne(job.content);
  await deps.vectors.upsert(embedder, [
    {
      id: job.turn_id,
      vector,
      payload: {
        user_id: job.user_id,
        session_id: job.session_id,
        role: job.role,
        name: job.name,
        kind: job.kind,
        content: job.content,
        content_hash: job.content_hash,
        created_at: job.created_at,
      },
    },
  ]);
  // a delete or edit that landed while the model ran must not be undone by this late vector
  if ((await currentHash(job, deps)) !== job.content_hash) {
    await deps.vectors.delete(job.user_id, [job.turn_id]);
    return { skipped: 'deleted or edited while it was embedded' };
  }
  const turnLog = deps.turnLog;
  if (turnLog) await turnLog.writes.run(() => turnLog.markEmbedded(job.user_id, [job.turn_id], embedder.id));
  return { embedder: embedder.id };
}

/**
 * The content hash the memory has now, or null when it is gone. A worker on a host without the SQLite
 * file cannot tell, and trusts the job (the reconciler on the file's host repairs what it must).
 */
async function currentHash(job: EmbedJob, deps: ProcessorDeps): Promise<string | null> {
  if (job.kind === 'turn') {
    if (!deps.turnLog) return job.content_hash;
    return deps.turnLog.get(job.user_id, job.turn_id)?.content_hash ?? null;
  }
  if (!deps.longTerm) return job.content_hash;
  return (await deps.longTerm.get(job.user_id, job.turn_id))?.content_hash ?? null;
}
