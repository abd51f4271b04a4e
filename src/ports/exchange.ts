import type { MemoryEntry } from '../domain/entry.js';
import type { Turn } from '../domain/turn.js';

/** A turn-log turn as an export carries it: the turn and which of its jobs had completed. */
export interface ExportedTurn {
  turn: Turn;
  /** its persist job had completed */
  persisted: boolean;
  /** the embedder that embedded it; null while its embed job is to run */
  embedded_with: string | null;
}

/** A turn to restore, with the job state it is to keep. */
export interface RestoredTurn {
  turn: Turn;
  /** its persist job had completed: recorded done, with this importance */
  persistedImportance: number | null;
  /** embedded once but without a vector now (a pruned memory): recorded embedded by this embedder, so it stays without one */
  embeddedWith: string | null;
}

/**
 * Export and import of one user's memories in the durable store (the portable file itself is the use
 * case's; see docs/architecture.md, maintenance).
 *
 * Contract: `counts`, `turns` and `entries` read only the named user's rows; the pages come in
 * insertion (acceptance) order and cover every row present when the page is read. `restore` is all or
 * nothing, in one transaction: turns are appended as the turn log appends them (an id the user holds
 * with the same content is left as it is; with other content it rejects with `ContentConflictError`
 * and nothing is written), the job state of each new turn is recorded, and entries are written when
 * the user does not hold their id yet. It returns the ids actually written. Not covered: validation
 * (the caller validates every record first), the short-term tier, vectors and the jobs to enqueue.
 */
export interface ExchangeStore {
  counts(userId: string): Promise<{ turns: number; entries: number }>;
  turns(userId: string, batch?: number): AsyncIterable<ExportedTurn[]>;
  entries(userId: string, batch?: number): AsyncIterable<MemoryEntry[]>;
  restore(turns: readonly RestoredTurn[], entries: readonly MemoryEntry[], acceptedAt: number): Promise<{ turns: string[]; entries: string[] }>;
}
