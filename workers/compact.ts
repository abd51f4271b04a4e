import type { CompactJob } from '../queues/payloads.js';
import type { CompactionResult } from '../src/compaction/compactor.js';
import type { ProcessorDeps } from './deps.js';

/**
 * Compacts one session (SPEC §6). A `threshold` job re-checks the estimate first, so a duplicate or a
 * late job finds the session already under the limit and does nothing; a summary already stored for
 * the same turns is reused. A throw fails the attempt and the queue retries it; the session is left
 * as it was.
 */
export async function processCompact(job: CompactJob, deps: ProcessorDeps): Promise<CompactionResult> {
  if (!deps.compactor) throw new Error('compact jobs must run on the host that holds the SQLite file');
  return deps.compactor.compact(job.user_id, job.session_id, job.reason);
}
