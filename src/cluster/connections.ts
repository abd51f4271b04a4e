import type { Worker } from 'node:cluster';
import type { Socket } from 'node:net';

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
 * the primary tells every process the total. A process holding more than its share answers a request
 * with `Connection: close`, one connection at a time until it holds its share: the client opens a new
 * connection for its next request, which the kernel gives to a process that waits — the one with
 * fewer. A share is the total over the processes, rounded up, and SLACK more, so that counts that are
 * even close nothing.
 */

/** how often, at most, a process reports its count, and the primary the total: balance needs no more */
export const REPORT_MS = 100;
/** connections a process may hold beyond an even share before it closes one */
export const SLACK = 1;

export interface CountMessage {
  nc: 'connections';
  open: number;
}

export interface TotalMessage {
  nc: 'connections-total';
  total: number;
  processes: number;
}

const isTotal = (m: unknown): m is TotalMessage => typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === 'connections-total';
const isCount = (m: unknown): m is CountMessage => typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === 'connections';

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
  private readonly report: () => void;

  constructor(send: (m: CountMessage) => void) {
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
   * Whether the response on `socket` should close it: this process holds more than its share, counting
   * out the connections already told to close. Marks the socket so that it is told once. Nothing is
   * closed on a total that does not hold this process's own connections yet (its report, or the
   * primary's answer, is still on its way): an even burst would lose connections it has every right to.
   */
  shouldClose(socket: Socket): boolean {
    if (this.processes < 2 || this.total < this.open || this.closing.has(socket)) return false;
    const share = Math.ceil(this.total / this.processes) + SLACK;
    if (this.open - this.leaving <= share) return false;
    this.closing.add(socket);
    this.leaving++;
    return true;
  }

  /** Listens for the primary's totals on this process's IPC channel. */
  listen(channel: NodeJS.Process): void {
    channel.on('message', (m: unknown) => {
      if (isTotal(m)) this.heard(m);
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
      for (const w of this.counts.keys()) if (w.isConnected()) w.send(m);
    });
  }

  /** Counts a new HTTP process's reports; its count goes when it exits. */
  watch(worker: Worker): void {
    this.counts.set(worker, 0);
    worker.on('message', (m: unknown) => {
      if (!isCount(m)) return;
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
