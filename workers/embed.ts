import type { EmbedJob } from '../queues/payloads.js';
import type { ProcessorDeps } from './deps.js';

/** Thrown when a job cannot succeed on this worker yet; the job is retried with backoff. */
export class EmbedderUnavailableError extends Error {
  constructor(model: string) {
    super(`embedding model "${model}" is not loaded on this worker`);
    this.name = 'EmbedderUnavailableError';
  }
}

/**
 * Embeds one turn and upserts its vector, tagged with the embedder. Concurrent jobs share model calls
 * through the batching embedder. Idempotent: the upsert is keyed by turn id.
 */
export async function processEmbed(job: EmbedJob, deps: ProcessorDeps): Promise<{ embedder: string }> {
  const embedder = await deps.embedders.ready();
  if (!embedder) throw new EmbedderUnavailableError(deps.embedders.model);
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
