import { jobIdFor } from '../../queues/job-ids.js';
import type { JobQueue } from '../../queues/queue.js';
import type { Turn } from '../domain/turn.js';
import { subjectOf, type Logger } from '../logger.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { TokenCounter } from './tokens.js';

export interface AutoCompactionDeps {
  shortTerm: ShortTermStore;
  queue: JobQueue;
  tokens: TokenCounter;
  log: Logger;
  /** compaction_threshold × context_window: a session estimated above this is compacted */
  limitTokens: number;
  /** a guard older than this is dropped, so a job lost on another host cannot block a session forever */
  guardTtlMs?: number;
  clock?: () => number;
}

export type CheckOutcome = 'enqueued' | 'below_threshold' | 'in_flight';

export interface AutoCompactionCounters {
  /** sessions checked after a reply */
  checks: number;
  /** compact jobs enqueued */
  enqueued: number;
  /** triggers ignored because the session's compaction was already waiting or running */
  in_flight: number;
  /** checks that failed (logged and swallowed) */
  failures: number;
}

const DEFAULT_GUARD_TTL_MS = 10 * 60_000;

/**
 * The deterministic id of a session's compact job. `epoch` is the id of the oldest turn of the
 * session's short-term history — it changes when a compaction puts its summary there — so every
 * trigger before the compaction lands names the same job (which the queue adds once, on any backend,
 * across processes), and the first trigger after it names a new one.
 */
export function compactJobId(userId: string, sessionId: string, epoch: string): string {
  return jobIdFor('compact', `${userId}\u0000${sessionId}\u0000${epoch}`);
}

/**
 * Auto-compaction (docs/architecture.md, compaction and archival): after a reply is accepted (an assistant turn through the write path),
 * estimates the session's tokens and, when they exceed the limit, enqueues a `compact` job.
 *
 * Fire-and-forget: `onAccepted` returns at once and the check runs on a later turn of the event loop,
 * so it never adds latency to the reply; a failing check is logged, counted and swallowed. One
 * compaction per session at a time: the job id is deterministic per session and epoch, and an
 * in-process guard skips the enqueue while this process knows one is waiting or running (released
 * when the compaction settles here, when the epoch moves on, or after `guardTtlMs`).
 */
export class AutoCompactor {
  private readonly guards = new Map<string, { epoch: string; at: number }>();
  private readonly pending = new Set<Promise<void>>();
  private readonly stats: AutoCompactionCounters = { checks: 0, enqueued: 0, in_flight: 0, failures: 0 };
  private readonly guardTtlMs: number;
  private readonly now: () => number;

  constructor(private readonly deps: AutoCompactionDeps) {
    this.guardTtlMs = deps.guardTtlMs ?? DEFAULT_GUARD_TTL_MS;
    this.now = deps.clock ?? Date.now;
  }

  /** the write path's `onAccepted` hook: a check per session that just got a reply */
  readonly onAccepted = (turns: readonly Turn[]): void => {
    const sessions = new Map<string, Turn>();
    for (const t of turns) if (t.role === 'assistant') sessions.set(`${t.user_id}\u0000${t.session_id}`, t);
    for (const t of sessions.values()) this.trigger(t.user_id, t.session_id);
  };

  /** schedules a check without waiting for it */
  trigger(userId: string, sessionId: string): void {
    const run: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.check(userId, sessionId))
      .then(
        () => undefined,
        (err: unknown) => {
          this.stats.failures++;
          this.deps.log.warn({ err: (err as Error).message, subject: subjectOf(userId, sessionId) }, 'auto-compaction check failed; the reply is unaffected');
        },
      )
      .finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  /** Estimates the session and enqueues its compaction when it is over the limit. */
  async check(userId: string, sessionId: string): Promise<CheckOutcome> {
    this.stats.checks++;
    const key = `${userId}\u0000${sessionId}`;
    const history = await this.deps.shortTerm.recent(userId, sessionId);
    const epoch = history[0]?.id ?? '';
    const guard = this.guards.get(key);
    if (guard && (guard.epoch !== epoch || this.now() - guard.at > this.guardTtlMs)) this.guards.delete(key);
    const { tokens, limitTokens } = this.deps;
    // the byte bound first: most sessions are far below the limit, and tokenizing each new turn was
    // ~6% of the serve primary's CPU under single-turn writes; then the count, a slice of the event loop
    // at a time (the reply is new: 32,000 characters merged in one go held the loop 15–30 ms)
    if (tokens.sessionAtMost(history) <= limitTokens || (await tokens.sessionSoon(history)) <= limitTokens) return 'below_threshold';
    if (this.guards.has(key)) {
      this.stats.in_flight++;
      return 'in_flight';
    }
    // guarded before the await, so a check running meanwhile sees it
    this.guards.set(key, { epoch, at: this.now() });
    try {
      await this.deps.queue.add('compact', [{ jobId: compactJobId(userId, sessionId, epoch), data: { user_id: userId, session_id: sessionId, reason: 'threshold' } }]);
    } catch (err) {
      this.guards.delete(key);
      throw err;
    }
    this.stats.enqueued++;
    this.deps.log.debug({ user_id: userId, session_id: sessionId }, 'session over the compaction threshold; compact job enqueued');
    return 'enqueued';
  }

  /** a compaction of the session ended in this process: the next trigger may enqueue again */
  release(userId: string, sessionId: string): void {
    this.guards.delete(`${userId}\u0000${sessionId}`);
  }

  counters(): Readonly<AutoCompactionCounters> {
    return { ...this.stats };
  }

  /** resolves when every scheduled check has run (tests, a CLI about to exit) */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
