import { setTimeout as wait } from 'node:timers/promises';

/** how long a long job works before it gives the event loop a pause as long */
export const SLICE_MS = 10;

/** when the process's long jobs last paused (pause): the slice they share started then */
let sliceStarted = performance.now();

/**
 * Long jobs on the event loop (a serve on the embedded defaults runs the queue's jobs in its own
 * process: archival, compaction, erasure) work in slices of ~SLICE_MS and then pause as long, so that
 * the requests waiting are answered meanwhile. Given only a turn of the event loop instead of a pause,
 * requests arriving every 10 ms still queued behind slices of 10 ms (docs/architecture.md, "Long
 * jobs"). The slice is the process's, not a job's: one job's steps calling another's (a summary
 * inside an archival run) share it, rather than each working its own 10 ms in a row.
 */
export async function pause(ms = SLICE_MS): Promise<void> {
  await wait(ms);
  sliceStarted = performance.now();
}

/** how long the current slice has run */
export function sliceSpent(): number {
  return performance.now() - sliceStarted;
}

/** a pause once the current slice has run `ms`; else nothing */
export async function room(ms = SLICE_MS): Promise<void> {
  if (sliceSpent() >= ms) await pause(ms);
}
