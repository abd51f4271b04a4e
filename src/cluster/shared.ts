import type { JobQueue } from '../../queues/queue.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { PrimaryCalls } from './ipc.js';

/**
 * What the primary of `serve --processes N` lends its HTTP processes besides its write path (which
 * accepts every turn) when it runs the in-process backends (no Redis): its short-term tier — so the next retrieve of a session sees the turn just
 * written, whichever process answers it — and its job queue — so every job runs in the one process
 * that consumes it, never twice. With Redis, each process uses Redis and nothing is lent.
 */
export type SharedPart = 'short_term' | 'queue';

/** short-term methods a worker process calls on the primary's store (close is its own, local) */
export const SHORT_TERM_METHODS = ['push', 'recent', 'replace', 'remove', 'clear', 'clearAll', 'sessions', 'everySession', 'ping'] as const;
/** queue methods served to worker processes: producing and reading; consuming, scheduling and erasure stay in the primary */
export const QUEUE_METHODS = ['add', 'requeue', 'counts', 'failed', 'retryFailed', 'removeByIds', 'idle'] as const;

/** The primary's short-term tier, seen from a worker process. */
export function sharedShortTerm(calls: PrimaryCalls): ShortTermStore {
  const call = <T>(method: (typeof SHORT_TERM_METHODS)[number], ...args: unknown[]) => calls.call<T>('short_term', method, args);
  return {
    backend: 'memory',
    push: (turns) => call('push', turns),
    recent: (userId, sessionId, limit) => call('recent', userId, sessionId, limit),
    replace: (userId, sessionId, turns) => call('replace', userId, sessionId, turns),
    remove: (userId, sessionId, ids) => call('remove', userId, sessionId, ids),
    clear: (userId, sessionId) => call('clear', userId, sessionId),
    clearAll: () => call('clearAll'),
    sessions: (userId) => call('sessions', userId),
    everySession: () => call('everySession'),
    ping: () => call<boolean>('ping').catch(() => false),
    close: async () => {},
  };
}

/** The primary's job queue, seen from a worker process: it adds and reads jobs, it never runs them. */
export function sharedQueue(calls: PrimaryCalls): JobQueue {
  const call = <T>(method: (typeof QUEUE_METHODS)[number], ...args: unknown[]) => calls.call<T>('queue', method, args);
  const primaryOnly = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} runs in the serve primary process, not in its HTTP processes`);
  };
  return {
    backend: 'in-process',
    add: (queue, jobs) => call('add', queue, jobs),
    requeue: (queue, jobs) => call('requeue', queue, jobs),
    counts: () => call('counts'),
    failed: (queue, limit) => call('failed', queue, limit),
    retryFailed: (queue) => call('retryFailed', queue),
    removeByIds: (queue, jobIds) => call('removeByIds', queue, jobIds),
    idle: () => call('idle'),
    consume: primaryOnly('consuming jobs'),
    schedule: primaryOnly('the archival schedule'),
    // An erasure run here (an HTTP route, an MCP tool) reaches the primary's jobs through the erasures
    // table (its ErasureWatcher removes them), so this process has none of its own to remove; a throw
    // would report the erasure incomplete although the primary completes it.
    removeFailed: async () => 0,
    removeJobs: async () => ({ removed: 0, active: 0 }),
    close: async () => {},
  };
}
