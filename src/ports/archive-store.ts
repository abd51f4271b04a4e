import type { MemoryEntry } from '../domain/entry.js';
import { contentHash } from '../domain/hash.js';
import type { Turn } from '../domain/turn.js';

/** A session and the time of its last turn (turn log and long-term entries). */
export interface SessionRef {
  user_id: string;
  session_id: string;
  last_at: string;
}

/** What archiving one session would replace, read in one snapshot. */
export interface SessionContents {
  ref: SessionRef;
  /** unpinned turn-log rows, oldest first */
  turns: Turn[];
  /** unpinned long-term entries of kind turn or summary, oldest first */
  entries: MemoryEntry[];
  /** the session's earlier archive, when it was archived before and became active again */
  previous: MemoryEntry | null;
  /** ids left alone because they are pinned (in the turn log or the long-term store) */
  pinned: string[];
  /** changes whenever any of the above changes: the write re-checks it */
  fingerprint: string;
}

/**
 * The fingerprint of a session's contents, the same on every backend: it changes when the last
 * activity, a turn's or entry's text, an entry's update time, the earlier archive or the pinned set
 * changes.
 */
export function fingerprintOf(c: Omit<SessionContents, 'fingerprint'>): string {
  return contentHash(
    JSON.stringify([
      c.ref.last_at,
      c.turns.map((t) => [t.id, t.content_hash]),
      c.entries.map((e) => [e.id, e.content_hash, e.updated_at]),
      c.previous ? [c.previous.id, c.previous.content_hash] : null,
      c.pinned,
    ]),
  );
}

export type RunTrigger = 'schedule' | 'manual';
export type RunOutcome = 'running' | 'done' | 'failed' | 'duplicate';

export interface ArchiveRun {
  seq: number;
  run_id: string;
  trigger: RunTrigger;
  outcome: RunOutcome;
  dry_run: boolean;
  cutoff: string;
  sessions: number;
  replaced: number;
  error: string | null;
  pid: number;
  started_at: string;
  finished_at: string | null;
}

/**
 * What archival needs of the durable store: inactive sessions, what archiving one would replace, the
 * replacement itself, an outbox of vector deletes (the vector backend may be down when a session is
 * archived), and a record of runs.
 *
 * Contract: `contents` reads one snapshot. `replace` re-reads the session and, when its fingerprint
 * changed (a turn arrived, an entry was edited) or it is no longer older than `cutoff`, changes nothing
 * and returns null; else, in one transaction, it writes the archive and removes the unpinned turn-log
 * rows and the earlier archive, and it removes the entries read, each only while it is as it was read
 * (in that transaction, or after it in steps: a read may then find the archive beside some of them
 * until `replace` resolves, and a process stopped midway leaves them to the next run). Each removed
 * id's vector is queued for deletion with its removal. Pinned memories are never removed. `startRun`
 * of a scheduled run id that already completed records a `duplicate` run and says so: it must not run
 * again. Not covered: summarizing (the archiver does it) and the vectors themselves (the semantic
 * tier).
 */
export interface ArchiveStore {
  /** sessions whose last activity is older than `cutoff` and that still hold something to archive */
  candidates(cutoff: string, userId?: string): Promise<SessionRef[]>;
  contents(ref: SessionRef, previousId: string): Promise<SessionContents>;
  replace(expected: SessionContents, archive: MemoryEntry, cutoff: string): Promise<{ archive: MemoryEntry; removed: string[] } | null>;
  /** memories whose vectors are still to be deleted; `live` ones were written again since and must be kept */
  pendingVectorDeletes(limit: number): Promise<Array<{ user_id: string; id: string; live: boolean }>>;
  vectorDeletesDone(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<void>;
  vectorDeletesPending(): Promise<number>;
  /** pages through every archive entry (the sweep that re-enqueues archives missing a vector) */
  archives(batch?: number): AsyncIterable<MemoryEntry[]>;
  startRun(run: { run_id: string; trigger: RunTrigger; dry_run: boolean; cutoff: string }): Promise<{ seq: number; duplicate: boolean }>;
  finishRun(seq: number, r: { outcome: Exclude<RunOutcome, 'running'>; sessions: number; replaced: number; error?: string }): Promise<void>;
  /** the newest runs first */
  lastRuns(limit?: number): Promise<ArchiveRun[]>;
  /** runs whose id starts with `prefix` (tests and inspection of one scheduler's occurrences) */
  runsOf(prefix: string): Promise<ArchiveRun[]>;
}
