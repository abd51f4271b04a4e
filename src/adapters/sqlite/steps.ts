import { room, SLICE_MS, sliceLeft } from '../../pace.js';
import type { Db } from './db.js';

/** how long one transaction of a long delete runs, its commit included (with what ran before it in the slice) */
export const STEP_MS = SLICE_MS;

/** the most a commit is taken to cost per millisecond of its statements, whatever one was seen to cost */
const MAX_COMMIT_PER_MS = 3;

/**
 * Runs `next` in transactions that end with the process's slice of work (src/pace.ts: ~`stepMs`, half
 * as long while requests are being answered; at least one call each), with room for requests between
 * them. For deletes of many long-term entries: each leaves the text index under FTS5's secure-delete,
 * which rewrites the index pages holding its words (0.5–1 ms for a reply of 500 characters in an index
 * other users share, up to ~25 ms for one of 32,000), and one statement over a user of 1,400 real
 * turns held the process 0.8–1.1 s. A step's statements stop where they and their commit fill what is
 * left of the slice: the commit writes the pages they changed to the write-ahead log, and took about
 * as long as they ran (a prune's steps of 10 ms of deletes held the event loop 24–28 ms each). `next`
 * deletes a row, or a statement's worth, and answers false once nothing is left; `stepMs` 0: one call
 * a transaction.
 */
export async function inSteps(db: Db, next: () => boolean, stepMs = STEP_MS): Promise<void> {
  // a commit's time per millisecond of its statements, as the steps so far took it
  let commitPerMs = 1;
  for (;;) {
    const left = sliceLeft(stepMs);
    const began = performance.now();
    let ran = 0;
    const done = db
      .transaction((): boolean => {
        for (;;) {
          if (!next()) return true;
          ran = performance.now() - began;
          if (ran * (1 + commitPerMs) >= left) return false;
        }
      })
      .immediate();
    if (ran > 0) commitPerMs = Math.min(MAX_COMMIT_PER_MS, (commitPerMs + (performance.now() - began - ran) / ran) / 2);
    if (done) return;
    await room(stepMs);
  }
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
