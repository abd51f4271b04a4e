import type { JobQueue } from '../../queues/queue.js';
import type { ShortTermStore, VersionedTurns } from '../ports/short-term.js';
import type { Turn } from '../domain/turn.js';
import type { PrimaryCalls } from './ipc.js';

/**
 * What the primary of `serve --processes N` lends its HTTP processes besides its write path (which
 * accepts every turn) when it runs the in-process backends (no Redis): its short-term tier — so the next retrieve of a session sees the turn just
 * written, whichever process answers it — and its job queue — so every job runs in the one process
 * that consumes it, never twice. With Redis, each process uses Redis and nothing is lent.
 */
export type SharedPart = 'short_term' | 'queue';

/** short-term methods a worker process calls on the primary's store (close is its own, local) */
export const SHORT_TERM_METHODS = ['push', 'recent', 'recentSince', 'replace', 'remove', 'clear', 'clearAll', 'sessions', 'everySession', 'ping'] as const;
/** queue methods served to worker processes: producing and reading; consuming, scheduling and erasure stay in the primary */
export const QUEUE_METHODS = ['add', 'requeue', 'counts', 'failed', 'retryFailed', 'removeByIds', 'idle'] as const;

/** characters of turn text a worker process keeps of the sessions it read (see SessionCopies) */
const COPY_CHARS = 4_000_000;
/** a copy not read for this long is dropped: a deleted turn's text stays no longer in a process that no longer reads its session */
const COPY_MS = 60_000;

/**
 * The sessions a worker process read from the primary, each at the version it was read at, the one
 * read longest ago first. A read sends the version held and gets the turns back only when the session
 * changed since: a session's 50 turns crossing the channel cost both processes a structured clone each
 * (~90 µs to write, ~60 to read) at every retrieve of the session, and the primary's part of them was
 * a tenth of a templated retrieve's CPU. Every read still asks the primary, so nothing here is served
 * stale.
 */
class SessionCopies {
  private readonly held = new Map<string, { version: number; turns: Turn[]; chars: number; readAt: number }>();
  private chars = 0;

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string): { version: number; turns: Turn[] } | undefined {
    const cutoff = this.now() - COPY_MS;
    for (const [oldest, c] of this.held) {
      if (c.readAt > cutoff) break;
      this.drop(oldest);
    }
    return this.held.get(key);
  }

  set(key: string, version: number, turns: Turn[]): void {
    this.drop(key);
    const chars = turns.reduce((n, t) => n + t.content.length, 0);
    if (chars > COPY_CHARS) return;
    for (const oldest of this.held.keys()) {
      if (this.chars + chars <= COPY_CHARS) break;
      this.drop(oldest);
    }
    this.held.set(key, { version, turns, chars, readAt: this.now() });
    this.chars += chars;
  }

  /** a session read again moves to the end */
  touch(key: string): void {
    const c = this.held.get(key);
    if (!c) return;
    c.readAt = this.now();
    this.held.delete(key);
    this.held.set(key, c);
  }

  private drop(key: string): void {
    const c = this.held.get(key);
    if (!c) return;
    this.held.delete(key);
    this.chars -= c.chars;
  }
}

/** The primary's short-term tier, seen from a worker process. */
export function sharedShortTerm(calls: PrimaryCalls, clock?: () => number): ShortTermStore {
  const call = <T>(method: (typeof SHORT_TERM_METHODS)[number], ...args: unknown[]) => calls.call<T>('short_term', method, args);
  const copies = new SessionCopies(clock);
  const recentSince = (userId: string, sessionId: string, limit: number | undefined, known: number | null) =>
    call<VersionedTurns | null>('recentSince', userId, sessionId, limit, known);
  return {
    backend: 'memory',
    push: (turns) => call('push', turns),
    recent: async (userId, sessionId, limit) => {
      const key = `${userId}\u0000${sessionId}\u0000${limit ?? ''}`;
      const held = copies.get(key);
      const now = await recentSince(userId, sessionId, limit, held?.version ?? null);
      // null: unchanged since the copy's version (never null without a copy: no version is null)
      if (now === null) {
        copies.touch(key);
        return held!.turns.slice();
      }
      if (now.version !== null) copies.set(key, now.version, now.turns);
      return now.turns.slice();
    },
    recentSince,
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
