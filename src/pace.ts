import { setImmediate as nextTurn, setTimeout as wait } from 'node:timers/promises';

/** how long a long job works before it gives the event loop a turn, or a pause as long (sliceLength) */
export const SLICE_MS = 10;

/** when the current slice of work began */
let sliceStarted = performance.now();
/**
 * whether the event loop has read what arrived since the slice began: the next work begins a new
 * slice. Told by a timer, which runs in a later turn than the one it was set in, and then a
 * setImmediate, which runs after that turn's reads. A setImmediate alone runs at the end of the same
 * turn when set where the loop reads, and work queued behind it there (a batch's commit after a
 * summary's slice) took a second slice in the same turn; a timer alone runs before the next turn's
 * reads, and a slice begun behind them (a long text's preparation) and one begun in the next turn's
 * timers (an embedding) ran back to back: a connection accepted before the first waited 35–48 ms to
 * be read during a write of 30 turns of 32,000 characters.
 */
let turned = true;
/** the current slice's number: a timer of an earlier one tells nothing of it */
let slice = 0;

function startSlice(): void {
  sliceStarted = performance.now();
  turned = false;
  const begun = ++slice;
  setTimeout(() => {
    setImmediate(() => {
      if (slice === begun) turned = true;
    });
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
    // a connection not read yet: no slice begins before the loop reads it (a timer of 1 ms: a turn)
    if (connectionWaiting()) continue;
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
  return once(() => {
    inFlight--;
    lastSeen = performance.now();
  });
}

/** `fn` on the first call of the returned function; later calls do nothing */
function once(fn: () => void): () => void {
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    fn();
  };
}

/** connections that arrived and whose first request is not read yet (see arriving) */
let unread = 0;
/** when the newest of them arrived */
let newestArrival = Number.NEGATIVE_INFINITY;
/**
 * how long after the newest arrival connections not read yet hold the jobs back: one that never sends
 * a request (a client's spare connection) holds them no longer
 */
export const UNREAD_HOLD_MS = 4 * SLICE_MS;

/**
 * Marks a connection that has just arrived; the returned function marks it read (its first request's
 * head, or its end), and calls after the first do nothing. Its request is read at the loop's next
 * reads, a turn after it was accepted, and a job's slice in between made every such connection wait
 * for two slices: until it is read no slice begins (room() pauses, a young slice too), and the next
 * slices pause for it as for a request answered a moment ago.
 */
export function arriving(): () => void {
  lastSeen = newestArrival = performance.now();
  unread++;
  return once(() => {
    unread--;
  });
}

/** whether a connection that arrived a moment ago is not read yet (a request's work turns for it too: retrieval/in-turns.ts) */
export function connectionWaiting(): boolean {
  return unread > 0 && performance.now() - newestArrival < UNREAD_HOLD_MS;
}

/** whether a request is being answered, or was (or a connection arrived) a moment (a slice) ago: a client polling comes back */
function requestsWaiting(ms: number): boolean {
  return inFlight > 0 || connectionWaiting() || performance.now() - lastSeen < ms;
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
 * Once the current slice is over, or while a connection that has just arrived is not read yet: a pause
 * while requests are being answered; else one turn of the event loop, so that a request that arrived
 * meanwhile is read, and a pause only if one was. A pause no request needs is time a job stands idle:
 * paused unconditionally, the batch writes of a bulk ingest with no request in sight lost a share of
 * their throughput.
 */
export async function room(ms = SLICE_MS): Promise<void> {
  // a pause in progress: no job's work goes on in it
  if (performance.now() < freeUntil) return untilFree(sliceLength(ms));
  if (!sliceOver(ms) && !connectionWaiting()) return;
  if (!requestsWaiting(ms)) {
    await turn();
    if (!requestsWaiting(ms)) return startSlice();
  }
  await pause(sliceLength(ms));
}

/**
 * the timer of the turn() calls not answered yet: one for all of them, so that calls made together
 * (a write's concurrent accepts) go on together; one not fired yet fires after any call that finds it
 */
let marker: { fired: boolean } | null = null;

/**
 * One turn of the event loop in which it reads what has arrived. A setImmediate set while the loop
 * reads connections (where a request's handler runs) runs at the end of that same turn, before the
 * next connection is read: then a second one is needed, and a timer not fired before the call tells
 * when. It runs at the start of a turn, before that turn's reads, so once it has run the loop has read
 * or will read before the setImmediate's turn ends. (The slice's own mark tells of a turn since the
 * slice began, which may have come before this call.)
 */
export async function turn(): Promise<void> {
  // a slice begun now if none was since the loop last read
  sliceSpent();
  if (!marker || marker.fired) {
    const set = { fired: false };
    marker = set;
    setTimeout(() => {
      set.fired = true;
    }).unref();
  }
  const timed = marker;
  await nextTurn();
  if (!timed.fired) await nextTurn();
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
