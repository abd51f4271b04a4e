import type { ArchiveJob } from '../queues/payloads.js';
import type { Archiver } from '../src/archival/archiver.js';
import type { TextIndexMerge } from '../src/ports/long-term.js';

/** What the archive processor needs: archival over the durable store (docs/architecture.md, compaction and archival). */
export interface ArchiveDeps {
  archiver: Pick<Archiver, 'run'>;
}

/** What an archive job returns; counts only, since a queue backend keeps it (and forget must not chase it). */
export interface ArchiveJobResult {
  run_id: string;
  duplicate: boolean;
  dry_run: boolean;
  archived: number;
  replaced: number;
  failed: number;
  /** the text index's merge (Archiver's last step), or null */
  text_index: TextIndexMerge | null;
}

/**
 * Runs one archival pass (docs/architecture.md, compaction and archival). The job id is the run id: a scheduled occurrence carries its time
 * in it, so a retry of an occurrence that completed is recognized and skipped. A session that failed
 * (its summarizer threw) fails the job so that it is retried with backoff; sessions already archived
 * are not touched again.
 */
export async function processArchive(job: ArchiveJob, meta: { jobId: string }, deps: ArchiveDeps): Promise<ArchiveJobResult> {
  const r = await deps.archiver.run({
    ...(job.inactive_days !== undefined ? { inactiveDays: job.inactive_days } : {}),
    dryRun: job.dry_run,
    runId: meta.jobId,
    trigger: job.trigger,
  });
  if (r.failed > 0) throw new Error(`archival: ${r.failed} of ${r.sessions.length} session(s) failed; see the worker log`);
  return { run_id: r.run_id, duplicate: r.duplicate, dry_run: r.dry_run, archived: r.archived, replaced: r.replaced, failed: r.failed, text_index: r.text_index };
}
