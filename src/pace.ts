import { setImmediate as nextTurn, setTimeout as wait } from 'node:timers/promises';

/** how long a long job works before it gives the event loop a turn, or a pause as long (sliceLength) */
export const SLICE_MS = 10;

/** when the current slice of work began */
let sliceStarted = performance.now();
/**
 * whether the event loop has turned since: the next work begins a new slice. Told by a timer, which
 * runs in a later turn than the one it was set in; a setImmediate runs at the end of the same one, and
 * work queued behind it there (a batch's commit after a summary's slice) took a second slice in the
 * same turn.
 */
let turned = true;

function startSlice(): void {
  sliceStarted = performance.now();
  turned = false;
  setTimeout(() => {
    turned = true;
  }).unref();
}

/**
 * no slice begins before this: a pause is the process's, not a job's. Each job's own pause let the
 * others' slices fill it (their timers end at other times), so with a few jobs running the event loop
 * was never free for a request's next step (a probe's /health waited 160–200 ms during a write of 30
 * turns of 32,000 characters, 52–61 ms so).
 */
let freeUntil = 0;

/**
 * Long jobs on the event loop (a serve on the embedded defaults runs the queue's jobs in its own
 * process: archival, compaction, erasure, a fresh process's vector load) work in slices and then,
 * while requests are being answered (room), pause as long, so that they are answered meanwhile. Given
 * only a turn of the event loop instead of a pause, requests arriving every 10 ms still queued behind
 * slices of 10 ms (docs/architecture.md, "Long jobs"). A slice is the work of one turn of the event
 * loop, not a job's: jobs running in the same turn (a summary inside an archival run, an erasure
 * beside a prune), or whose pauses end together (Node runs every timer due in one turn), share it
 * rather than each work a slice in a row; once the loop has turned, the next work begins a new one,
 * so a short call after an idle spell never pauses.
 */
export async function pause(ms = SLICE_MS): Promise<void> {
  freeUntil = Math.max(freeUntil, performance.now() + ms);
  await untilFree(ms);
}

/** waits until no pause is in progress, then takes a slice (or a share of one begun in this turn) */
async function untilFree(ms: number): Promise<void> {
  for (;;) {
    const asked = performance.now();
    await wait(Math.max(0, freeUntil - asked));
    if (performance.now() < freeUntil) continue;
    // another job's pause ended first, in this same turn: its slice is this one's too, and once spent
    // the process pauses again
    const shared = !turned && sliceStarted > asked;
    if (shared && performance.now() - sliceStarted >= ms) {
      freeUntil = performance.now() + ms;
      continue;
    }
    if (!shared) startSlice();
    return;
  }
}

/** how long the current slice has run (a new one begins when the event loop has turned since) */
export function sliceSpent(): number {
  if (turned) startSlice();
  return performance.now() - sliceStarted;
}

/** requests this process is answering now (see answering) */
let inFlight = 0;
/** when the last of them was answered, or a connection arrived (see arriving) */
let lastSeen = Number.NEGATIVE_INFINITY;

/**
 * Marks a request this process answers (an HTTP request, a call from another process of `serve`)
 * from now until the returned function is called; calls after the first do nothing.
 */
export function answering(): () => void {
  inFlight++;
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    inFlight--;
    lastSeen = performance.now();
  };
}

/**
 * Marks a connection that has just arrived: its request is not read yet (that takes turns of the event
 * loop, each of which waited behind a slice: a probe's /health on a connection of its own waited
 * 200–350 ms while a write of long turns ran its jobs), and the next slices pause for it as for a
 * request answered a moment ago.
 */
export function arriving(): void {
  lastSeen = performance.now();
}

/** whether a request is being answered, or was (or a connection arrived) a moment (a slice) ago: a client polling comes back */
function requestsWaiting(ms: number): boolean {
  return inFlight > 0 || performance.now() - lastSeen < ms;
}

/**
 * A slice's length: `ms`, and half as long (its pause too) while requests are being answered. A
 * request's answer spans several turns of the event loop (its connection, its read, what its handler
 * awaits, its write), each of which may wait behind a slice: during a write of 30 turns of 32,000
 * characters and its jobs a /health took 56–71 ms with slices of 10 ms, 52–61 ms with 5. With no
 * request in sight, slices of 5 ms cost a bulk ingest a sixth of its throughput (more, smaller commits).
 */
function sliceLength(ms: number): number {
  return requestsWaiting(ms) ? ms / 2 : ms;
}

/** what is left of the current slice's length (sliceLength; negative once it has run over) */
export function sliceLeft(ms = SLICE_MS): number {
  return sliceLength(ms) - sliceSpent();
}

/** whether the current slice has run its length (sliceLength) */
export function sliceOver(ms = SLICE_MS): boolean {
  return sliceSpent() >= sliceLength(ms);
}

/**
 * Once the current slice is over: a pause while requests are being answered; else one turn of the
 * event loop, so that a request that arrived meanwhile is read, and a pause only if one was. A pause
 * no request needs is time a job stands idle: paused unconditionally, the batch writes of a bulk
 * ingest with no request in sight lost a share of their throughput.
 */
export async function room(ms = SLICE_MS): Promise<void> {
  // a pause in progress: no job's work goes on in it
  if (performance.now() < freeUntil) return untilFree(sliceLength(ms));
  if (!sliceOver(ms)) return;
  if (!requestsWaiting(ms)) {
    await nextTurn();
    if (!requestsWaiting(ms)) return startSlice();
  }
  await pause(sliceLength(ms));
}

/**
 * One turn of the event loop in which it reads what has arrived. A setImmediate set while the loop
 * reads connections (where a request's handler runs) runs at the end of that same turn, before the
 * next connection is read: then a second one is needed, and the slice's timer tells when. It runs at
 * the start of a turn, before that turn's reads, so once it has run the loop has read or will read
 * before the setImmediate's turn ends.
 */
export async function turn(): Promise<void> {
  // a slice (and its timer) begun now if none was since the loop last turned
  sliceSpent();
  await nextTurn();
  if (!turned) await nextTurn();
}

/**
 * A turn of the event loop at least: room() once the slice is over (a pause while requests wait), else
 * turn(). A fresh process's vector load gives one after each page; given as one setImmediate, those
 * set where the loop reads connections let nothing in, and `/health` during a fresh serve's first
 * retrieve waited 24–41 ms, 17–25 so (as is, five runs each).
 */
export async function giveTurn(ms = SLICE_MS): Promise<void> {
  if (sliceOver(ms)) await room(ms);
  else await turn();
}
