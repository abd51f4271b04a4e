import { hostname } from 'node:os';
import { QUEUE_NAMES } from '../../queues/names.js';
import type { JobQueue } from '../../queues/queue.js';
import { z } from 'zod';
import { KINDS, KindSchema } from '../domain/entry.js';
import { ErasureIncompleteError, NotFoundError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { DurableStore } from '../ports/durable-store.js';
import type { ErasedRows, ErasureListener, ErasureScope } from '../ports/erasure.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { ShortTermGuard } from './short-term-guard.js';
import type { VectorIndex } from '../ports/vector-index.js';
import { describeInstance, INSTANCE, parseInstance } from './process-instance.js';

/** What an erasure (forget, clear) removed, tier by tier; the CLI prints it, the HTTP routes answer it. */
export const ErasureReportSchema = z.object({
  scope: z.union([z.object({ user_id: z.string(), session_id: z.string().optional() }), z.object({ all: z.literal(true) })]),
  /** long-term entries by kind (turns, summaries, archives), pinned included */
  long_term: z.record(KindSchema, z.number().int()),
  turn_log: z.number().int(),
  /** short-term sessions removed */
  short_term: z.number().int(),
  /** vectors removed (under every embedder), when the backend reports it */
  vectors: z.number().int(),
  /** queued, completed and failed jobs removed because they held the text */
  jobs: z.number().int(),
  /** rows of other SQLite tables that carried the user's id (tables added later are covered too) */
  other_rows: z.record(z.string(), z.number().int()),
  /** parts that could not be erased (a backend down); the erasure must be run again */
  errors: z.array(z.string()),
  /**
   * The other running processes sharing the durable store that hold state of their own (a `serve`
   * without Redis), by instance id (`host:pid:random`): those that confirmed they applied this
   * erasure to it, and those that did not in time (their copy may still answer; the erasure is then
   * reported incomplete).
   */
  processes: z.object({ confirmed: z.array(z.string()), unconfirmed: z.array(z.string()) }),
});
export type ErasureReport = z.infer<typeof ErasureReportSchema>;

export interface ErasureOptions {
  /** how long to wait for running jobs that hold the text to finish (default 30 s) */
  settleMs?: number;
  /**
   * rebuild the SQLite file afterwards (VACUUM): only needed for a file written before secure delete
   * was on (older builds); holds the write lock for as long as the rebuild takes
   */
  vacuum?: boolean;
  /** how long to wait for the other processes sharing the file to confirm (default 10 s) */
  confirmMs?: number;
}

type Scope = ErasureScope;

/** What an erasure touches: the tiers and the queue of this process, and the durable store. */
export interface ErasureDeps {
  store: Pick<DurableStore, 'erasure'>;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
}

const SETTLE_POLL_MS = 100;
/** how often a process holding state of its own looks for erasures run elsewhere */
export const ERASURE_POLL_MS = 250;

/**
 * The report of an erasure that did its job, as every door answers it: one that found nothing is
 * `not_found` (HTTP 404), one that could not finish `erasure_incomplete` naming what is left (503).
 */
export function completedErasure(r: ErasureReport, what: string): ErasureReport {
  if (r.errors.length > 0) throw new ErasureIncompleteError(r.errors.join('; '), r.errors.map((message) => ({ path: what, message })));
  if (erasedNothing(r)) throw new NotFoundError(`memories of ${what}`);
  return r;
}

/** true when the erasure found nothing at all to remove */
export function erasedNothing(r: ErasureReport): boolean {
  const lt = r.long_term.turn + r.long_term.summary + r.long_term.archive;
  const other = Object.values(r.other_rows).reduce((a, b) => a + b, 0);
  return lt + r.turn_log + r.short_term + r.vectors + r.jobs + other === 0 && r.errors.length === 0;
}

/**
 * Erasure across every tier: the long-term store (turns, summaries, archives — pinned included), the
 * turn log, the short-term tier, vectors of every embedder, and jobs whose payload holds the text
 * (waiting, delayed, completed and failed; running ones are waited for). It runs in two rounds — jobs
 * out, data out, then once more — so that a job that was running when the erasure began cannot write
 * anything back. SQLite deletes run with `secure_delete` (freed bytes are zeroed; every connection of
 * this service has it on, so earlier deletes and edits left nothing behind either) and the write-ahead
 * log is checkpointed and truncated afterwards, so the text does not linger in the file's bytes.
 *
 * An erasure covers what exists when it runs: turns the client writes afterwards are new memories.
 */
export async function erase(services: ErasureDeps, scope: Scope, options: ErasureOptions = {}): Promise<ErasureReport> {
  const report = emptyReport(scope);
  const store = services.store.erasure;
  const ids = await store.idsIn(scope);
  const holds = jobMatcher(scope, ids);
  for (let round = 0; round < 2; round++) {
    await removeJobs(services, holds, options.settleMs ?? 30_000, report);
    addRows(report, await store.eraseRows(scope));
    await eraseVectors(services, scope, ids, report);
    await eraseShortTerm(services, scope, report);
  }
  // the round's jobs may have completed since (a completed job keeps its payload)
  await removeJobs(services, holds, options.settleMs ?? 30_000, report);
  if (options.vacuum) {
    try {
      await store.vacuum();
    } catch (err) {
      report.errors.push(`vacuum: ${(err as Error).message}`);
    }
  }
  // tells the other processes sharing the store (their in-process short-term store and queue) to erase too
  const seq = await store.signal(scope, INSTANCE, Date.now());
  await scrub(services, report);
  report.processes = await confirmations(services, seq, options.confirmMs ?? 10_000);
  for (const instance of report.processes.unconfirmed) {
    report.errors.push(`process ${describeInstance(instance)} (sharing this durable store, with an in-memory short-term tier or queue) did not confirm the erasure within ${options.confirmMs ?? 10_000} ms; it may still answer with the erased text until it does`);
  }
  report.errors = [...new Set(report.errors)];
  return report;
}

/**
 * Tells the other running processes that hold a short-term tier of their own (a `serve` without
 * Redis, which the CLI cannot reach) that turns in `scope` were deleted, edited or pruned here, and
 * waits until they have settled their copies against the turn log (or `timeoutMs` passes). With no
 * such process, nothing is written.
 */
export async function settleElsewhere(services: Pick<ErasureDeps, 'store'>, scope: Scope, timeoutMs = 10_000): Promise<ErasureReport['processes']> {
  const store = services.store.erasure;
  if ((await store.listeners(INSTANCE)).length === 0) return { confirmed: [], unconfirmed: [] };
  const seq = await store.signal(scope, INSTANCE, Date.now(), 'settle');
  return confirmations(services, seq, timeoutMs);
}

/** A listener on another host whose heartbeat is older than this is taken for gone (its pid cannot be checked from here). */
export const LISTENER_GONE_MS = 60_000;

/**
 * An idle listener writes its heartbeat this often (a sixth of LISTENER_GONE_MS); one that has just
 * applied an erasure writes it at once. Each heartbeat is a commit, and on SQLite every other
 * connection to the file (another process's) drops its page cache and its
 * mapping of the file before its next read: written on each ERASURE_POLL_MS poll, 4 times a second, it
 * made the long-term search at 100k turns of one user cost ~6 ms of CPU on that thread against ~3
 * (issue #25; a search right after a commit ~13 ms against ~2.6).
 */
export const HEARTBEAT_MS = LISTENER_GONE_MS / 6;

/**
 * Waits until every other live listener (a process holding state of its own) has applied the
 * erasure `seq`, or `timeoutMs` passes. A listener whose process is gone holds nothing any more and
 * is dropped from the table: on this host, no such pid; on another (PostgreSQL shared by several
 * hosts), no heartbeat for LISTENER_GONE_MS — until then a silent one is reported, as a hung local one is.
 */
async function confirmations(services: Pick<ErasureDeps, 'store'>, seq: number, timeoutMs: number): Promise<ErasureReport['processes']> {
  const deadline = Date.now() + timeoutMs;
  const store = services.store.erasure;
  for (;;) {
    const now = Date.now();
    const confirmed: string[] = [];
    const unconfirmed: string[] = [];
    for (const r of await store.listeners(INSTANCE)) {
      // a process killed without removing its row holds nothing any more; one alive but silent (hung,
      // stopped) may still answer with the text, and is reported
      if (gone(r, now)) {
        await store.leave(r.instance, r.heartbeat_at);
        continue;
      }
      (r.seen_seq >= seq ? confirmed : unconfirmed).push(r.instance);
    }
    if (unconfirmed.length === 0 || now >= deadline) return { confirmed, unconfirmed };
    await new Promise((resolve) => setTimeout(resolve, Math.min(ERASURE_POLL_MS / 2, Math.max(1, deadline - now))));
  }
}

function gone(r: ErasureListener, now: number): boolean {
  const where = parseInstance(r.instance);
  if (where && where.host === hostname()) return !alive(where.pid);
  return now - r.heartbeat_at > LISTENER_GONE_MS;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Applies the erasures other processes run to this process's own state. Without Redis, `serve` keeps
 * the short-term tier and the queue in its memory, where `neuralcleave memory forget` (another
 * process) cannot reach: this watcher, polling the `erasures` table, clears the scope from the local
 * short-term store, drops local jobs holding its text, and — when such a job was running — deletes
 * the vectors it may have written after the erasure. Started by wiring only where local state exists.
 */
export class ErasureWatcher {
  private last = 0;
  /** the seq and time of the last heartbeat written */
  private beatSeq = -1;
  private beatAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly deps: ErasureDeps & { log: Logger; shortTerm: ShortTermGuard },
    private readonly settleMs = 30_000,
  ) {}

  /**
   * Polls every `intervalMs`; erasures run before the start concern state this process does not have
   * yet. A poll that applied an erasure records it (in `erasure_listeners`) at once, for the process
   * that ran it waits for it; an idle one only every HEARTBEAT_MS, to say the process is alive.
   */
  async start(intervalMs = ERASURE_POLL_MS): Promise<void> {
    this.last = await this.deps.store.erasure.latestSignal();
    await this.beat();
    this.timer = setInterval(() => {
      this.running ??= this.poll()
        .then(() => this.beat())
        .catch((err: unknown) => this.deps.log.warn({ err: (err as Error).message }, 'could not apply the erasures of another process; retrying'))
        .finally(() => (this.running = null));
    }, intervalMs);
    this.timer.unref();
  }

  /** the heartbeat, when there is news (an erasure applied) or the last is HEARTBEAT_MS old */
  private async beat(): Promise<void> {
    const now = Date.now();
    if (this.last === this.beatSeq && now - this.beatAt < HEARTBEAT_MS) return;
    await this.deps.store.erasure.heartbeat(INSTANCE, this.last, now);
    this.beatSeq = this.last;
    this.beatAt = now;
  }

  /** Applies the signals written since the last poll; returns when done. */
  async poll(): Promise<void> {
    for (const { seq, scope, instance, action } of await this.deps.store.erasure.signalsAfter(this.last)) {
      if (instance === INSTANCE) {
        this.last = seq;
        continue;
      }
      if (action === 'settle') {
        const removed = await this.settle(scope);
        if (removed > 0) this.deps.log.info({ scope: scope.kind, short_term: removed }, 'applied a delete, edit or prune run by another process');
        this.last = seq;
        continue;
      }
      const report = emptyReport(scope);
      await eraseShortTerm(this.deps, scope, report);
      const active = await removeJobs(this.deps, jobMatcher(scope, new Set()), this.settleMs, report);
      if (active) await eraseVectors(this.deps, scope, new Set(), report);
      this.deps.log.info({ scope: scope.kind, short_term: report.short_term, jobs: report.jobs, errors: report.errors }, 'applied an erasure run by another process');
      // confirmed (by the next heartbeat) only once applied
      this.last = seq;
    }
  }

  /** the short-term copies in scope checked against the turn log (those of turns gone or edited go) */
  private async settle(scope: Scope): Promise<number> {
    const { shortTerm } = this.deps;
    const sessions =
      scope.kind === 'all'
        ? await shortTerm.everySession()
        : scope.kind === 'user'
          ? (await shortTerm.sessions(scope.userId)).map((session_id) => ({ user_id: scope.userId, session_id }))
          : [{ user_id: scope.userId, session_id: scope.sessionId }];
    let removed = 0;
    for (const s of sessions) removed += await shortTerm.settleSession(s.user_id, s.session_id);
    return removed;
  }

  async stop(): Promise<void> {
    const started = this.timer !== null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    if (started) await this.deps.store.erasure.leave(INSTANCE);
  }
}

function emptyReport(scope: Scope): ErasureReport {
  return {
    scope: scope.kind === 'all' ? { all: true } : { user_id: scope.userId, ...(scope.kind === 'session' ? { session_id: scope.sessionId } : {}) },
    long_term: { turn: 0, summary: 0, archive: 0 },
    turn_log: 0,
    short_term: 0,
    vectors: 0,
    jobs: 0,
    other_rows: {},
    errors: [],
    processes: { confirmed: [], unconfirmed: [] },
  };
}

function jobMatcher(scope: Scope, ids: ReadonlySet<string>): (data: unknown) => boolean {
  return (data) => {
    if (typeof data !== 'object' || data === null) return false;
    const d = data as { user_id?: unknown; session_id?: unknown; turn_id?: unknown };
    // archive jobs hold no user's text and are the scheduler's: never part of an erasure
    if (scope.kind === 'all') return d.user_id !== undefined || d.turn_id !== undefined;
    if (typeof d.turn_id === 'string' && ids.has(d.turn_id)) return true;
    return d.user_id === scope.userId && (scope.kind === 'user' || d.session_id === scope.sessionId);
  };
}

/** Removes the matching jobs, waiting for running ones; true when one was seen running. */
async function removeJobs(services: ErasureDeps, holds: (data: unknown) => boolean, settleMs: number, report: ErasureReport): Promise<boolean> {
  const deadline = Date.now() + settleMs;
  let sawActive = false;
  for (;;) {
    let active = 0;
    try {
      for (const q of QUEUE_NAMES) {
        if (q === 'archive') continue;
        const r = await services.queue.removeJobs(q, holds);
        report.jobs += r.removed;
        active += r.active;
      }
    } catch (err) {
      report.errors.push(`queue (${services.queue.backend}): ${(err as Error).message}`);
      return sawActive;
    }
    if (active === 0) return sawActive;
    sawActive = true;
    if (Date.now() > deadline) {
      report.errors.push(`${active} running ${active === 1 ? 'job' : 'jobs'} holding the text did not finish within ${settleMs} ms`);
      return sawActive;
    }
    await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
  }
}

function addRows(report: ErasureReport, rows: ErasedRows): void {
  for (const k of KINDS) report.long_term[k] += rows.long_term[k];
  report.turn_log += rows.turn_log;
  for (const [table, n] of Object.entries(rows.other_rows)) report.other_rows[table] = (report.other_rows[table] ?? 0) + n;
}

async function eraseVectors(services: ErasureDeps, scope: Scope, ids: ReadonlySet<string>, report: ErasureReport): Promise<void> {
  const { vectors } = services;
  try {
    if (scope.kind === 'all') {
      report.vectors += await vectors.count();
      await vectors.deleteAll();
      return;
    }
    report.vectors += await vectors.deleteWhere({ user_id: scope.userId, ...(scope.kind === 'session' ? { session_id: scope.sessionId } : {}) });
    // by id as well: a vector written with another payload (a moved or re-owned memory) is still this one
    if (ids.size > 0) await vectors.delete(scope.userId, [...ids]);
  } catch (err) {
    report.errors.push(`semantic tier (${vectors.backend}): ${(err as Error).message}`);
  }
}

async function eraseShortTerm(services: ErasureDeps, scope: Scope, report: ErasureReport): Promise<void> {
  const { shortTerm } = services;
  try {
    if (scope.kind === 'all') report.short_term += await shortTerm.clearAll();
    else report.short_term += await shortTerm.clear(scope.userId, scope.kind === 'session' ? scope.sessionId : undefined);
  } catch (err) {
    report.errors.push(`short-term tier (${shortTerm.backend}): ${(err as Error).message}`);
  }
}

/** Moves the write-ahead log into the store and truncates it, so erased rows' old page images leave the disk. */
async function scrub(services: ErasureDeps, report: ErasureReport): Promise<void> {
  try {
    const { complete } = await services.store.erasure.scrub();
    if (!complete) report.errors.push('the write-ahead log could not be truncated now (another process is reading); it is on the next checkpoint');
  } catch (err) {
    report.errors.push(`checkpoint: ${(err as Error).message}`);
  }
}

export function forgetUser(services: ErasureDeps, userId: string, options?: ErasureOptions): Promise<ErasureReport> {
  return erase(services, { kind: 'user', userId }, options);
}

export function clearSession(services: ErasureDeps, userId: string, sessionId: string, options?: ErasureOptions): Promise<ErasureReport> {
  return erase(services, { kind: 'session', userId, sessionId }, options);
}

export function clearAll(services: ErasureDeps, options?: ErasureOptions): Promise<ErasureReport> {
  return erase(services, { kind: 'all' }, options);
}
