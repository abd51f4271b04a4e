import type { QueueName } from './names.js';
import type { JobPayload } from './payloads.js';

export interface JobSpec<Q extends QueueName> {
  /** deterministic per unit of work: adding a job whose id is waiting or running adds nothing */
  jobId: string;
  data: JobPayload<Q>;
}

/** Handles one job; throwing fails the attempt (retried with backoff where the backend can). */
export type Processor<Q extends QueueName> = (data: JobPayload<Q>, meta: { jobId: string; attempt: number }) => Promise<unknown>;
export type ProcessorMap = { [Q in QueueName]?: Processor<Q> };

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

export interface FailedJob {
  queue: QueueName;
  jobId: string;
  attempts: number;
  reason: string;
  failedAt: string | null;
  data: unknown;
}

export interface ConsumeOptions {
  queues: readonly QueueName[];
  concurrency: number;
}

/**
 * The queue seam: BullMQ on Redis, or an in-process queue (p-queue). Producers `add`; a worker
 * process `consume`s with the processors of `workers/`.
 *
 * Contract: `add` resolves once the jobs are accepted by the backend (for BullMQ: stored in Redis);
 * a job id already waiting or running is not added twice. Processors must be idempotent: a job may run
 * more than once (a retry, a stalled job picked up by another worker). Not covered: durability of an
 * in-process queue across a crash — the turn log covers that.
 */
export interface JobQueue {
  readonly backend: 'bullmq' | 'in-process';
  add<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void>;
  /**
   * `add` for work known to be unfinished (the reconciler's re-enqueue of turns still pending in the
   * turn log): a job with the same id kept as failed — its attempts used up, or its workers killed
   * twice while running it — is replaced by a fresh one, where `add` would leave it failed and the turn
   * pending for good. A job waiting, running or completed is left as it is.
   */
  requeue<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void>;
  consume(processors: ProcessorMap, options: ConsumeOptions): Promise<void>;
  counts(): Promise<Record<QueueName, JobCounts>>;
  failed(queue: QueueName, limit: number): Promise<FailedJob[]>;
  /** re-runs failed jobs; returns how many */
  retryFailed(queue: QueueName): Promise<number>;
  /** removes failed jobs whose data matches (forget removes failed jobs holding a user's text) */
  removeFailed(queue: QueueName, match: (data: unknown) => boolean): Promise<number>;
  /**
   * Removes every job whose data matches in every state but active — waiting, delayed, prioritized,
   * paused, completed and failed — so no stored job keeps a forgotten user's text. Active jobs cannot
   * be removed: `active` counts the matching ones still running (the caller waits and calls again).
   * BullMQ's event history of the queue is emptied as well: its `completed` events keep job return
   * values after the jobs are gone. Only erasures call this.
   */
  removeJobs(queue: QueueName, match: (data: unknown) => boolean): Promise<{ removed: number; active: number }>;
  /**
   * Adds a job to `queue` with `data` at each occurrence of the cron `pattern` in `timezone`.
   * Idempotent: calling it again (every worker does, at start) replaces the schedule of that queue
   * rather than adding a second one, and each occurrence yields one job however many processes call it.
   */
  schedule<Q extends QueueName>(queue: Q, pattern: string, timezone: string, data: JobPayload<Q>): Promise<void>;
  /** resolves when no job is waiting or running (tests, `ingest --wait` in-process) */
  idle(): Promise<void>;
  /** stops consuming (in-flight jobs finish or are handed back) and releases connections */
  close(): Promise<void>;
}
