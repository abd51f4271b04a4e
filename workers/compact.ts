import type { CompactJob } from '../queues/payloads.js';
import type { CompactionResult, ConversationCompactor } from '../src/compaction/compactor.js';

/** What the compact processor needs: compaction over the durable store and the short-term tier. */
export interface CompactDeps {
  compactor: Pick<ConversationCompactor, 'compact'>;
}

/**
 * Compacts one session (docs/architecture.md, compaction and archival). A `threshold` job re-checks the estimate first, so a duplicate or a
 * late job finds the session already under the limit and does nothing; a summary already stored for
 * the same turns is reused. A throw fails the attempt and the queue retries it; the session is left
 * as it was.
 */
export async function processCompact(job: CompactJob, deps: CompactDeps): Promise<CompactJobResult> {
  const r = await deps.compactor.compact(job.user_id, job.session_id, job.reason);
  // BullMQ keeps a job's return value in Redis: ids and counts only, never the conversation's text
  return { status: r.status, summary_id: r.summary_id, summarizer: r.summarizer, summarized: r.summarized, kept: r.kept };
}

export type CompactJobResult = Pick<CompactionResult, 'status' | 'summary_id' | 'summarizer' | 'summarized' | 'kept'>;
