import type { Worker } from 'node:cluster';
import { ERROR_CATALOG, NeuralCleaveError, type ErrorCode, type ErrorDetail } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * Calls from the HTTP processes of `serve --processes N` to objects the primary holds (its
 * in-process queue and short-term tier), over the cluster's IPC channel (advanced serialization:
 * structured clone, so Turn objects and their nulls cross intact). One call, one reply, matched by id.
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

function isCall(m: unknown): m is CallMessage {
  return typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === 'call';
}

function isReply(m: unknown): m is ReplyMessage {
  return typeof m === 'object' && m !== null && (m as { nc?: unknown }).nc === 'reply';
}

/** The primary's side: answers a worker's calls on `targets` (only the methods listed for each). */
export function answerCalls(worker: Worker, targets: Record<string, { object: object; methods: readonly string[] }>, log: Logger): void {
  worker.on('message', (m: unknown) => {
    if (!isCall(m)) return;
    const target = targets[m.target];
    const reply = (r: ReplyMessage) => {
      // the worker may have exited meanwhile: its caller is gone too
      if (worker.isConnected()) worker.send(r);
    };
    if (!target || !target.methods.includes(m.method)) {
      reply({ nc: 'reply', id: m.id, ok: false, name: 'Error', message: `${m.target}.${m.method} is not served to worker processes` });
      return;
    }
    const fn = (target.object as Record<string, (...a: unknown[]) => unknown>)[m.method]!;
    Promise.resolve()
      .then(() => fn.apply(target.object, m.args))
      .then(
        (value) => reply({ nc: 'reply', id: m.id, ok: true, value }),
        (err: unknown) => {
          log.debug({ target: m.target, method: m.method, err: (err as Error).message }, 'call from a worker process failed');
          reply({ nc: 'reply', id: m.id, ok: false, ...errorReply(err) });
        },
      );
  });
}

/** A worker's side: calls on the primary's objects; every call fails once the primary is gone. */
export class PrimaryCalls {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(private readonly channel: NodeJS.Process = process) {
    channel.on('message', (m: unknown) => {
      if (!isReply(m)) return;
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.value);
      else w.reject(errorOf(m));
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
      const message: CallMessage = { nc: 'call', id, target, method, args: [...args] };
      this.channel.send(message, undefined, undefined, (err: Error | null) => {
        if (!err) return;
        this.waiting.delete(id);
        reject(err);
      });
    });
  }
}
