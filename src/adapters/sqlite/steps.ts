import { pause, SLICE_MS, sliceSpent } from '../../pace.js';
import type { Db } from './db.js';

/** how long one transaction of a long delete runs (with what ran before it in the slice) before it commits */
export const STEP_MS = SLICE_MS;

/**
 * Runs `next` in transactions that end with the process's slice of work (src/pace.ts: ~`stepMs`, at
 * least one call each), pausing as long between them, so that the requests waiting on the event loop
 * are answered meanwhile. For deletes of many long-term entries: each leaves the text index under
 * FTS5's secure-delete, which rewrites the index pages holding its words (0.5–1 ms for a reply of 500
 * characters in an index other users share, up to ~25 ms for one of 32,000), and one statement over a
 * user of 1,400 real turns held the process 0.8–1.1 s. `next` deletes a row, or a statement's worth,
 * and answers false once nothing is left; `stepMs` 0: one call a transaction.
 */
export async function inSteps(db: Db, next: () => boolean, stepMs = STEP_MS): Promise<void> {
  const step = (): boolean => {
    for (;;) {
      if (!next()) return true;
      if (sliceSpent() >= stepMs) return false;
    }
  };
  while (!db.transaction(step).immediate()) await pause(stepMs);
}

/** `each` of `items` in order, a call a statement, in inSteps' transactions */
export async function eachInSteps<T>(db: Db, items: readonly T[], each: (item: T) => void, stepMs = STEP_MS): Promise<void> {
  let at = 0;
  await inSteps(
    db,
    () => {
      if (at === items.length) return false;
      each(items[at++]!);
      return true;
    },
    stepMs,
  );
}
