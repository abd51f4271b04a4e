import type { Worker } from 'node:cluster';
import type { Socket } from 'node:net';
import { sendToWorker } from './ipc.js';

/**
 * Keep-alive connections spread over the HTTP processes of `serve --processes N`.
 *
 * The processes accept their own connections (SCHED_NONE, see src/roots/serve.ts): the kernel hands a
 * new connection to a process waiting for one, and a burst of them — a client's pool opening its
 * connections at once — all goes to the one process that waits while the other is busy. Kept alive,
 * they stay there: 16 connections on one process of two, half the service's throughput, for as long as
 * the client keeps them (the templated bench's profile: 3 runs in 24, 459–574 against ~1,000 req/s).
 *
 * So each HTTP process counts its open connections and tells the primary (at most every REPORT_MS);
 * the primary tells every process the total. A process holding far more than an even share (SKEWED
 * times it, and SLACK) for SKEW_MS balances for BALANCE_MS: it answers requests with `Connection:
 * close`, one connection at a time, whenever it holds more than its share and SLACK. The client opens a
 * new connection for its next request, which the kernel gives to a process that waits, or back to this
 * one (closed again while the balancing lasts). Only a skew starts it, because the counts a process hears
 * are up to two reports old and a replacement lands on either process: closing whenever a process held
 * more than its share kept moving connections back and forth (20 write connections: 34 closes in 3 s).
 */

/** how often, at most, a process reports its count, and the primary the total: balance needs no more */
export const REPORT_MS = 100;
/** connections a process may hold beyond an even share once it is balancing */
export const SLACK = 1;
/** a process starts balancing when it holds this many times an even share (and SLACK) */
export const SKEWED = 1.5;
/**
 * how long a skew must last before a process balances: the counts a process hears may be a report old,
 * and when one client's connections go and another's arrive (a load run after another) a skew that is
 * not one shows for a report or two (the bench's write run after its retrieve runs: p99 45–47 ms
 * against 23–27 without balancing, when a skew seen once was enough)
 */
export const SKEW_MS = 500;
/** how long a process balances once it found itself skewed */
export const BALANCE_MS = 2_000;

export interface CountMessage {
  nc: 'connections';
  open: number;
}

export interface TotalMessage {
  nc: 'connections-total';
  total: number;
  processes: number;
}

/** whether an IPC message is one of these, of kind `nc` */
const isKind = <M extends CountMessage | TotalMessage>(m: unknown, nc: M['nc']): m is M => typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === nc;

/** Calls `fn` once after `ms`, however often it is asked meanwhile. */
function coalesced(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout | null = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
    timer.unref();
  };
}

/** An HTTP process's side: its connections, the service's total, and which response closes its connection. */
export class ConnectionShare {
  private open = 0;
  /** connections answered with `Connection: close` and not yet closed: not counted again */
  private readonly closing = new WeakSet<Socket>();
  private leaving = 0;
  private total = 0;
  private processes = 1;
  /** until when this process closes connections beyond its share (see SKEWED) */
  private balancingUntil = 0;
  /** since when every look found this process skewed (null: the last did not) */
  private skewedSince: number | null = null;
  private readonly report: () => void;

  constructor(
    send: (m: CountMessage) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.report = coalesced(REPORT_MS, () => send({ nc: 'connections', open: this.open }));
  }

  /** A new connection of this process; its close is counted too. */
  opened(socket: Socket): void {
    this.open++;
    socket.once('close', () => {
      this.open--;
      if (this.closing.has(socket)) this.leaving--;
      this.report();
    });
    this.report();
  }

  /** The primary's word on every process's connections. */
  heard(m: TotalMessage): void {
    this.total = m.total;
    this.processes = m.processes;
  }

  /**
   * Whether the response on `socket` should close it: this process is balancing (it held SKEWED times
   * an even share for SKEW_MS, less than BALANCE_MS ago) and holds more than its share, counting out
   * the connections already told to close. Marks the socket so that it is told once. Nothing is closed
   * on a total that does not hold this process's own connections yet (its report, or the primary's
   * answer, is still on its way): an even burst would lose connections it has every right to.
   */
  shouldClose(socket: Socket): boolean {
    if (this.processes < 2 || this.total < this.open || this.closing.has(socket)) return false;
    const even = this.total / this.processes;
    const held = this.open - this.leaving;
    const now = this.now();
    if (now >= this.balancingUntil) {
      if (held <= SKEWED * even + SLACK) {
        this.skewedSince = null;
        return false;
      }
      this.skewedSince ??= now;
      if (now - this.skewedSince < SKEW_MS) return false;
      this.skewedSince = null;
      this.balancingUntil = now + BALANCE_MS;
    }
    if (held <= Math.ceil(even) + SLACK) return false;
    this.closing.add(socket);
    this.leaving++;
    return true;
  }

  /** Listens for the primary's totals on this process's IPC channel. */
  listen(channel: NodeJS.Process): void {
    channel.on('message', (m: unknown) => {
      if (isKind<TotalMessage>(m, 'connections-total')) this.heard(m);
    });
  }
}

/** The primary's side: each HTTP process's count, and the total told to every one of them. */
export class ConnectionTally {
  private readonly counts = new Map<Worker, number>();
  private readonly broadcast: () => void;

  constructor() {
    this.broadcast = coalesced(REPORT_MS, () => {
      const m = this.total();
      for (const w of this.counts.keys()) sendToWorker(w, m);
    });
  }

  /** Counts a new HTTP process's reports; its count goes when it exits. */
  watch(worker: Worker): void {
    this.counts.set(worker, 0);
    worker.on('message', (m: unknown) => {
      if (!isKind<CountMessage>(m, 'connections')) return;
      this.counts.set(worker, m.open);
      this.broadcast();
    });
    worker.once('exit', () => {
      this.counts.delete(worker);
      this.broadcast();
    });
  }

  total(): TotalMessage {
    let total = 0;
    for (const n of this.counts.values()) total += n;
    return { nc: 'connections-total', total, processes: this.counts.size };
  }
}
