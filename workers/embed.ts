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
  deps.turnLog?.markEmbedded([job.turn_id], embedder.id);
  return { embedder: embedder.id };
}
