import type { Db } from './db.js';

/** how long one transaction of a long delete runs before it commits; the caller then waits as long */
export const STEP_MS = 10;

/**
 * Runs `next` in transactions of about `stepMs` each, waiting as long between them, so that the
 * requests waiting on the event loop are answered meanwhile. For deletes of many long-term entries:
 * each leaves the text index under FTS5's secure-delete, which rewrites the index pages holding its
 * words (0.5–1 ms for a reply of 500 characters in an index other users share, up to ~25 ms for one of
 * 32,000), and one statement over a user of 1,400 real turns held the process 0.8–1.1 s. Given a single
 * turn of the event loop between steps instead of a wait, requests arriving every 10 ms still queued
 * behind them (GET /health 0.6 s during a forget). `next` deletes a row, or a statement's worth, and
 * answers false once nothing is left; `stepMs` 0: one call a transaction.
 */
export async function inSteps(db: Db, next: () => boolean, stepMs = STEP_MS): Promise<void> {
  const step = (): boolean => {
    const started = performance.now();
    for (;;) {
      if (!next()) return true;
      if (performance.now() - started >= stepMs) return false;
    }
  };
  while (!db.transaction(step).immediate()) await new Promise((resolve) => setTimeout(resolve, stepMs));
}
