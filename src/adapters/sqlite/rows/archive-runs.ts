import type { ArchiveRun } from '../../../ports/archive-store.js';

/** An `archive_runs` row as better-sqlite3 returns it. */
export type ArchiveRunRow = Omit<ArchiveRun, 'dry_run'> & { dry_run: number };

/** The columns of `archive_runs`, in the port's order. */
export const ARCHIVE_RUN_COLUMNS = 'seq, run_id, trigger, outcome, dry_run, cutoff, sessions, replaced, error, pid, started_at, finished_at';

export function rowToRun(r: ArchiveRunRow): ArchiveRun {
  return { ...r, dry_run: r.dry_run === 1 };
}
