import { setTimeout as wait } from 'node:timers/promises';

/** how long a long job works before it gives the event loop a pause as long */
export const SLICE_MS = 10;

/** when the current slice of work began */
let sliceStarted = performance.now();
/** whether the event loop has turned (its check phase ran) since: the next work begins a new slice */
let turned = true;

function startSlice(): void {
  sliceStarted = performance.now();
  turned = false;
  setImmediate(() => {
    turned = true;
  }).unref();
}

/**
 * Long jobs on the event loop (a serve on the embedded defaults runs the queue's jobs in its own
 * process: archival, compaction, erasure, a fresh process's vector load) work in slices of
 * ~SLICE_MS and then pause as long, so that the requests waiting are answered meanwhile. Given only a
 * turn of the event loop instead of a pause, requests arriving every 10 ms still queued behind slices
 * of 10 ms (docs/architecture.md, "Long jobs"). A slice is the work of one turn of the event loop, not
 * a job's: jobs running in the same turn (a summary inside an archival run, an erasure beside a
 * prune), or whose pauses end together (Node runs every timer due in one turn), share it rather
 * than each work 10 ms in a row; once the loop has turned, the next work begins a new one, so a short
 * call after an idle spell never pauses.
 */
export async function pause(ms = SLICE_MS): Promise<void> {
  for (;;) {
    const asked = performance.now();
    await wait(ms);
    // another job's pause ended first, in this same turn: its slice is this one's too, and once spent
    // this job waits again
    const shared = !turned && sliceStarted > asked;
    if (shared && performance.now() - sliceStarted >= ms) continue;
    if (!shared) startSlice();
    return;
  }
}

/** how long the current slice has run (a new one begins when the event loop has turned since) */
export function sliceSpent(): number {
  if (turned) startSlice();
  return performance.now() - sliceStarted;
}

/** a pause once the current slice has run `ms`; else nothing */
export async function room(ms = SLICE_MS): Promise<void> {
  if (sliceSpent() >= ms) await pause(ms);
}
