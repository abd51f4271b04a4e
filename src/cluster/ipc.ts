import type { Serializable } from 'node:child_process';
import type { Worker } from 'node:cluster';
import { ERROR_CATALOG, NeuralCleaveError, type ErrorCode, type ErrorDetail } from '../errors.js';
import type { Logger } from '../logger.js';
import { answering } from '../pace.js';

/**
 * Calls from the HTTP processes of `serve --processes N` to objects the primary holds (its
 * in-process queue and short-term tier), over the cluster's IPC channel (advanced serialization:
 * structured clone, so Turn objects and their nulls cross intact). One call, one reply, matched by id.
 * Past the first, the calls made in one event-loop turn travel as one message, and so do the replies
 * ready in one turn: a message costs both processes a serialization, a pipe write and a wake-up,
 * whatever it holds.
 */

interface CallMessage {
  nc: 'call';
  id: number;
  target: string;
  method: string;
  args: unknown[];
}

/** a failed call's error: typed errors (the API maps them by code) keep their code and details */
interface ErrorReply {
  name: string;
  message: string;
  code?: ErrorCode;
  details?: ErrorDetail[];
}

type ReplyMessage = { nc: 'reply'; id: number; ok: true; value: unknown } | ({ nc: 'reply'; id: number; ok: false } & ErrorReply);

function errorReply(err: unknown): ErrorReply {
  if (err instanceof NeuralCleaveError) return { name: err.name, message: err.message, code: err.code, ...(err.details ? { details: err.details } : {}) };
  return { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) };
}

function errorOf(r: ErrorReply): Error {
  if (r.code !== undefined && r.code in ERROR_CATALOG) return new NeuralCleaveError(r.code, r.message, r.details);
  return Object.assign(new Error(r.message), { name: r.name });
}

/** what crosses the channel: the calls (or replies) of one event-loop turn */
interface Batch<T> {
  nc: 'batch';
  items: T[];
}

/**
 * Sends to an HTTP process unless it is gone. One that has just exited still counts as connected until
 * the primary reads the end of its channel, and the write to it fails (EPIPE): without a callback that
 * failure is an 'error' event on the Worker, which nothing handles, and it ended the primary — every
 * other process with it — when an HTTP process died (or stopped, at SIGTERM) while the primary answered
 * it or told it the connection counts. Its callers are gone with it, so the failure is dropped.
 */
export function sendToWorker(worker: Worker, message: unknown): void {
  if (worker.isConnected()) worker.send(message as Serializable, undefined, undefined, dropped);
}

/** Sends to the primary unless it is gone; the same failure as sendToWorker's, from the other side. */
export function sendToPrimary(channel: NodeJS.Process, message: unknown): void {
  if (channel.connected && channel.send) channel.send(message, undefined, undefined, dropped);
}

const dropped = (): void => {};

function isBatch<T>(m: unknown): m is Batch<T> {
  return typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === 'batch' && Array.isArray((m as { items?: unknown }).items);
}

/**
 * Sends the first message of an event-loop turn at once (a lone call waits for nothing) and collects
 * the others, sent as one Batch after the turn: under load many requests are read in one turn, and
 * their calls cross together. `send` reports a failed write to every message of its batch.
 */
class Outbox<T> {
  private items: T[] = [];
  private open = false;

  constructor(private readonly send: (batch: Batch<T>, items: readonly T[]) => void) {}

  push(item: T): void {
    if (this.open) {
      this.items.push(item);
      return;
    }
    this.open = true;
    this.send({ nc: 'batch', items: [item] }, [item]);
    setImmediate(() => {
      this.open = false;
      const items = this.items;
      if (items.length === 0) return;
      this.items = [];
      this.send({ nc: 'batch', items }, items);
    });
  }
}

/** The primary's side: answers a worker's calls on `targets` (only the methods listed for each). */
export function answerCalls(worker: Worker, targets: Record<string, { object: object; methods: readonly string[] }>, log: Logger): void {
  const replies = new Outbox<ReplyMessage>((batch) => sendToWorker(worker, batch));
  worker.on('message', (m: unknown) => {
    if (!isBatch<CallMessage>(m)) return;
    for (const call of m.items) answer(call);
  });
  const answer = (m: CallMessage) => {
    const target = targets[m.target];
    if (!target || !target.methods.includes(m.method)) {
      replies.push({ nc: 'reply', id: m.id, ok: false, name: 'Error', message: `${m.target}.${m.method} is not served to worker processes` });
      return;
    }
    const fn = (target.object as Record<string, (...a: unknown[]) => unknown>)[m.method]!;
    // a call is a request another process is answering: this one's long jobs pause for it (src/pace.ts)
    const answered = answering();
    Promise.resolve()
      .then(() => fn.apply(target.object, m.args))
      .finally(answered)
      .then(
        (value) => replies.push({ nc: 'reply', id: m.id, ok: true, value }),
        (err: unknown) => {
          log.debug({ target: m.target, method: m.method, err: (err as Error).message }, 'call from a worker process failed');
          replies.push({ nc: 'reply', id: m.id, ok: false, ...errorReply(err) });
        },
      );
  };
}

/** A worker's side: calls on the primary's objects; every call fails once the primary is gone. */
export class PrimaryCalls {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly calls: Outbox<CallMessage>;

  constructor(private readonly channel: NodeJS.Process = process) {
    this.calls = new Outbox<CallMessage>((batch, items) => {
      const failed = (err: Error) => {
        for (const c of items) {
          const w = this.waiting.get(c.id);
          if (!w) continue;
          this.waiting.delete(c.id);
          w.reject(err);
        }
      };
      if (!this.channel.connected || !this.channel.send) return failed(new Error('the serve primary process is gone'));
      this.channel.send(batch, undefined, undefined, (err: Error | null) => {
        if (err) failed(err);
      });
    });
    channel.on('message', (m: unknown) => {
      if (!isBatch<ReplyMessage>(m)) return;
      for (const r of m.items) {
        const w = this.waiting.get(r.id);
        if (!w) continue;
        this.waiting.delete(r.id);
        if (r.ok) w.resolve(r.value);
        else w.reject(errorOf(r));
      }
    });
    channel.on('disconnect', () => {
      for (const w of this.waiting.values()) w.reject(new Error('the serve primary process is gone'));
      this.waiting.clear();
    });
  }

  call<T>(target: string, method: string, args: readonly unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.channel.connected || !this.channel.send) return reject(new Error('the serve primary process is gone'));
      const id = this.next++;
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.calls.push({ nc: 'call', id, target, method, args: [...args] });
    });
  }
}
