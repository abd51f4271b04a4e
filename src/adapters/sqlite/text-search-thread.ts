import type { Worker } from 'node:worker_threads';
import { siblingThread } from '../thread.js';
import type { ListOptions, TextHit } from '../../ports/long-term.js';

/** what the thread is asked: one `searchText` call */
export interface TextSearchCall {
  id: number;
  userId: string;
  query: string;
  /** without its `signal` (an AbortSignal is not sent to a thread) */
  options: Omit<ListOptions, 'signal'>;
}

export type TextSearchReply = { id: number; ok: true; hits: TextHit[] } | { id: number; ok: false; message: string };

/**
 * searches sent to the thread at once; one more runs on the caller's thread instead: a full thread
 * would make it wait behind another query while its own thread may be idle
 */
const MAX_IN_FLIGHT = 2;

interface Waiting {
  resolve: (hits: TextHit[]) => void;
  reject: (err: Error) => void;
  call: TextSearchCall;
}

/**
 * The long-term tier's BM25 search on a worker thread with its own read-only connection to the file
 * (docs/architecture.md, retrieval): a retrieval pass runs the semantic scan on its own thread while
 * FTS5 ranks on this one, so a pass costs about the slower of the two instead of their sum, and the
 * tier's time budget can end a wait that really runs concurrently. WAL gives the connection every
 * transaction committed before the call was sent. The thread starts on the first search and is used
 * once it is up; until then, when it has MAX_IN_FLIGHT calls, or after it failed, `local` answers.
 */
export class TextSearchThread {
  private worker: Worker | null = null;
  /** set to 1 by the thread once it can answer: read without waiting for a message (a caller that never yields to the event loop would never see one) */
  private readonly up = new Int32Array(new SharedArrayBuffer(4));
  private failed = false;
  private next = 1;
  /** searches the thread answered (tests, stats) */
  answered = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly path: string,
    private readonly local: (userId: string, query: string, o: ListOptions) => Promise<TextHit[]>,
  ) {}

  search(userId: string, query: string, options: ListOptions): Promise<TextHit[]> {
    // a caller that gave up (its tier's budget ran out) before the search started: nothing is run
    if (options.signal?.aborted) return Promise.reject(options.signal.reason as Error);
    if (!this.worker && !this.failed) this.start();
    if (!this.worker || Atomics.load(this.up, 0) !== 1 || this.waiting.size >= MAX_IN_FLIGHT) return this.local(userId, query, options);
    const { signal: _unsent, ...sent } = options;
    return new Promise<TextHit[]>((resolve, reject) => {
      const call: TextSearchCall = { id: this.next++, userId, query, options: sent };
      this.waiting.set(call.id, { resolve, reject, call });
      // a call waiting for its answer keeps the process up; an idle thread does not
      if (this.waiting.size === 1) this.worker!.ref();
      this.worker!.postMessage(call);
    });
  }

  /**
   * Starts the thread now rather than at the first search; resolves once it can answer (true), after
   * `timeoutMs`, or at once when it cannot start. Started by a big user's first search, the thread was
   * not up for that search, which ran on the caller's thread on a cold connection (100k turns of one
   * user: 86 ms of event loop at a fresh serve's first retrieve).
   */
  async warm(timeoutMs: number): Promise<boolean> {
    if (!this.worker && !this.failed) this.start();
    if (!this.worker) return false;
    // ES2024's Atomics.waitAsync (Node ≥ 16), not in this project's lib
    const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: unknown } }).waitAsync;
    const wait = waitAsync(this.up, 0, 0, timeoutMs);
    if (!wait.async) return true;
    // the wait alone does not keep the process up (nor does the idle thread): until it ends, the thread does
    const worker = this.worker;
    worker.ref();
    try {
      return (await wait.value) === 'ok';
    } finally {
      if (this.waiting.size === 0 && this.worker === worker) worker.unref();
    }
  }

  /** Ends the thread (and its connection); later searches run on the caller's thread. */
  async close(): Promise<void> {
    this.failed = true;
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
    this.rerunLocally();
  }

  private start(): void {
    const workerData = { path: this.path, up: this.up };
    const worker = siblingThread(import.meta.url, 'text-search-worker', { workerData });
    this.worker = worker;
    worker.on('message', (m: TextSearchReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      // only while the thread is ours: an answer read after close() began terminating it must not let
      // go of the handle terminate() holds, or nothing keeps the process up until the thread's exit
      // and close() never settles
      if (this.waiting.size === 0 && this.worker === worker) worker.unref();
      this.answered++;
      if (m.ok) w.resolve(m.hits);
      else w.reject(new Error(m.message));
    });
    const gone = () => {
      if (this.worker !== worker) return;
      this.failed = true;
      this.worker = null;
      this.rerunLocally();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    // never what keeps a process alive (after the listeners: adding one refs the port again)
    worker.unref();
  }

  /** calls the thread took and will not answer: answered here */
  private rerunLocally(): void {
    const left = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of left) this.local(w.call.userId, w.call.query, w.call.options).then(w.resolve, w.reject);
  }
}
