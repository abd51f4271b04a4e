import type { ProcessorMap, Processor } from '../queues/queue.js';
import type { QueueName } from '../queues/names.js';
import type { Logger } from '../src/logger.js';
import type { Db } from '../src/tiers/sqlite/db.js';

export interface GroupCommitOptions {
  /** the longest a transaction stays open (and holds SQLite's write lock) */
  maxHoldMs: number;
  /** after a commit, this long with no group transaction, so other processes get the write lock */
  gapMs: number;
}

/**
 * Group commit for a worker process: the SQLite writes of the jobs running at the same time share one
 * transaction instead of one (or three) each — the commit, and the FTS5 index flush with it, is most
 * of what a job costs. A job joins the open transaction when it starts (or opens one); the
 * transaction commits when every job that joined has finished, or after `maxHoldMs`, whichever is
 * first. A job is reported done only once the writes it made are committed, so BullMQ never marks
 * a job completed whose writes could still be lost; if the commit fails, every job waiting on it
 * fails and is retried. Transactions the stores open themselves become savepoints inside it.
 *
 * Other processes on the same file (the API, other workers) wait for the write lock while a group
 * transaction is open; the hold is bounded by `maxHoldMs`, and `gapMs` without one after each commit
 * lets them in.
 */
export class GroupCommit {
  private open = false;
  private epoch = 0;
  private members = 0;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private holdTimer: NodeJS.Timeout | null = null;
  private commitQueued = false;
  private pausedUntil = 0;
  private commits = 0;
  private jobs = 0;

  constructor(
    private readonly db: Db,
    private readonly o: GroupCommitOptions,
    private readonly log: Logger,
  ) {}

  /** Joins the open transaction or opens one; returns its epoch, or null when the job runs on its own. */
  enter(): number | null {
    this.jobs++;
    if (this.open) {
      this.members++;
      return this.epoch;
    }
    // someone else's transaction (a store mid-transaction), or the gap after a commit
    if (this.db.inTransaction || Date.now() < this.pausedUntil) return null;
    this.db.exec('BEGIN IMMEDIATE');
    this.open = true;
    this.members = 1;
    this.holdTimer = setTimeout(() => this.commit(), this.o.maxHoldMs);
    return this.epoch;
  }

  /** The job's processor has ended: resolves once everything it wrote is committed. */
  leave(epoch: number | null): Promise<void> {
    if (!this.open) return Promise.resolve(); // its writes were committed (by a group commit or on their own)
    if (epoch === this.epoch && --this.members === 0) this.queueCommit();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** the last member left: commit after the continuations of this tick have had their turn */
  private queueCommit(): void {
    if (this.commitQueued) return;
    this.commitQueued = true;
    setImmediate(() => {
      this.commitQueued = false;
      if (this.members === 0) this.commit();
    });
  }

  commit(): void {
    if (!this.open) return;
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    const waiters = this.waiters;
    this.waiters = [];
    this.open = false;
    this.epoch++;
    this.members = 0;
    this.pausedUntil = Date.now() + this.o.gapMs;
    try {
      this.db.exec('COMMIT');
      this.commits++;
      for (const w of waiters) w.resolve();
    } catch (err) {
      // the writes of every job in it are gone: they fail and BullMQ retries them
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // already rolled back by SQLite
      }
      this.log.warn({ err: (err as Error).message, jobs: waiters.length }, 'group commit failed; its jobs will be retried');
      for (const w of waiters) w.reject(err as Error);
    }
  }

  /** jobs per commit so far (for logs and the bench) */
  stats(): { jobs: number; commits: number } {
    return { jobs: this.jobs, commits: this.commits };
  }

  /** Wraps processors so that each run joins the group transaction and waits for its commit. */
  wrap(processors: ProcessorMap): ProcessorMap {
    const out: ProcessorMap = {};
    for (const [queue, processor] of Object.entries(processors) as Array<[QueueName, Processor<QueueName> | undefined]>) {
      if (!processor) continue;
      const wrapped: Processor<QueueName> = async (data, meta) => {
        const epoch = this.enter();
        let result: unknown;
        try {
          result = await processor(data, meta);
        } catch (err) {
          await this.leave(epoch).catch(() => {});
          throw err;
        }
        await this.leave(epoch);
        return result;
      };
      (out as Record<QueueName, Processor<QueueName>>)[queue] = wrapped;
    }
    return out;
  }

  /** Commits what is open (shutdown). */
  close(): void {
    this.commit();
  }
}
