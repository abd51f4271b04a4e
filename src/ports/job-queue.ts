/**
 * The job-queue port, generic over the job types it carries (queue name → payload type): `queues/`
 * instantiates it with this project's four queues, so the port itself knows nothing of them.
 */
export type JobTypes = { [queue: string]: unknown };

/** A queue name of `J`. */
export type QueueOf<J extends JobTypes> = keyof J & string;

export interface JobSpec<J extends JobTypes, Q extends QueueOf<J>> {
  /** deterministic per unit of work: adding a job whose id is waiting or running adds nothing */
  jobId: string;
  data: J[Q];
}

/**
 * Handles one job; throwing fails the attempt, which is retried with backoff until the attempts are
 * used up — unless the error is a `DoNotRetryError`, which fails the job at once.
 */
export type Processor<J extends JobTypes, Q extends QueueOf<J>> = (data: J[Q], meta: { jobId: string; attempt: number }) => Promise<unknown>;

/** One job handed to a batched processor. */
export interface BatchJob<J extends JobTypes, Q extends QueueOf<J>> {
  data: J[Q];
  jobId: string;
  attempt: number;
}

/** How one job of a batch ended: `error` fails that job alone, as a Processor's throw would. */
export type JobOutcome = { ok: true; value?: unknown } | { ok: false; error: unknown };

/**
 * A processor that takes many jobs of its queue at once, so their reads, model call and writes are
 * shared (one transaction for the batch instead of one per few jobs). It answers one outcome per
 * job, in order: a job's failure is its own (retried with its own attempts, or failed for good on a
 * DoNotRetryError), never its batch-mates'. A rejection of the whole call fails every job of it.
 */
export interface BatchedProcessor<J extends JobTypes, Q extends QueueOf<J>> {
  batch(jobs: ReadonlyArray<BatchJob<J, Q>>): Promise<readonly JobOutcome[]>;
  /** at most this many jobs per call */
  maxBatch: number;
}

export type ProcessorMap<J extends JobTypes> = { [Q in QueueOf<J>]?: Processor<J, Q> | BatchedProcessor<J, Q> };

export function isBatched<J extends JobTypes, Q extends QueueOf<J>>(p: Processor<J, Q> | BatchedProcessor<J, Q>): p is BatchedProcessor<J, Q> {
  return typeof p !== 'function';
}

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

export interface FailedJob<J extends JobTypes> {
  queue: QueueOf<J>;
  jobId: string;
  attempts: number;
  reason: string;
  failedAt: string | null;
  data: unknown;
}

export interface ConsumeOptions<J extends JobTypes> {
  queues: ReadonlyArray<QueueOf<J>>;
  concurrency: number;
}

/**
 * Thrown by a processor (or by the queue for a payload its schema refuses) when another attempt
 * cannot succeed: the job fails at once, with this message as its reason, whatever the backend.
 */
export class DoNotRetryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DoNotRetryError';
  }
}

/**
 * A `DoNotRetryError`, also one thrown by another copy of this module (a processor bundled with its
 * own build of the package): the class may differ, the name does not.
 */
export function isDoNotRetry(err: unknown): err is Error {
  return err instanceof DoNotRetryError || (err instanceof Error && err.name === 'DoNotRetryError');
}

/**
 * The queue seam: producers `add`; a worker process `consume`s with the processors of `workers/`.
 *
 * Contract (test/contract/job-queue.contract.ts runs it against every backend): `add` validates each
 * payload against the queue's schema (a bad one rejects with a `ValidationError` naming the fields,
 * and nothing of the batch is added; `requeue` and `schedule` validate the same way) and resolves once
 * the jobs are accepted by the backend (for a networked queue: stored there). A job id already
 * waiting, running or kept as failed is not added twice; a completed one may be remembered too (BullMQ
 * keeps the last completed jobs, the in-process queue does not), so work to run again goes through
 * `requeue` or a new id. A processor gets the parsed payload (schema defaults applied). A failed attempt
 * is retried with exponential backoff (the first delay doubled each time) up to the configured
 * attempts, except for a `DoNotRetryError`; then the job is kept as failed, with the error's message as
 * its reason. At most `concurrency` jobs of a queue run at once in one consumer, a batched processor's
 * jobs each counted: a batch holds at most `min(maxBatch, concurrency)` jobs, and each job of it is
 * settled, retried and kept failed on its own, exactly as if it had run alone. Processors must be
 * idempotent: a job may run more than once (a retry, a stalled job picked up by another worker). Not
 * covered: durability of an in-process queue across a crash — the turn log covers that — and ordering
 * between jobs.
 */
export interface JobQueue<J extends JobTypes> {
  readonly backend: 'bullmq' | 'in-process';
  add<Q extends QueueOf<J>>(queue: Q, jobs: ReadonlyArray<JobSpec<J, Q>>): Promise<void>;
  /**
   * `add` for work known to be unfinished (the reconciler's re-enqueue of turns still pending in the
   * turn log): a job with the same id kept as failed — its attempts used up, or its workers killed
   * twice while running it — or kept as completed (it ended without finishing the work: an embed job
   * skipped on a worker without the model) is replaced by a fresh one, where `add` would leave it and
   * the turn pending for good. A job waiting or running is left as it is.
   */
  requeue<Q extends QueueOf<J>>(queue: Q, jobs: ReadonlyArray<JobSpec<J, Q>>): Promise<void>;
  consume(processors: ProcessorMap<J>, options: ConsumeOptions<J>): Promise<void>;
  counts(): Promise<Record<QueueOf<J>, JobCounts>>;
  /** the failed jobs kept, newest first, at most `limit` */
  failed(queue: QueueOf<J>, limit: number): Promise<Array<FailedJob<J>>>;
  /** re-runs failed jobs; returns how many */
  retryFailed(queue: QueueOf<J>): Promise<number>;
  /** removes failed jobs whose data matches (forget removes failed jobs holding a user's text) */
  removeFailed(queue: QueueOf<J>, match: (data: unknown) => boolean): Promise<number>;
  /**
   * Removes every job whose data matches in every state but active — waiting, delayed, prioritized,
   * paused, completed and failed — so no stored job keeps a forgotten user's text. Active jobs cannot
   * be removed: `active` counts the matching ones still running (the caller waits and calls again).
   * A backend's event history that keeps job data or return values is emptied as well. Only erasures
   * call this.
   */
  removeJobs(queue: QueueOf<J>, match: (data: unknown) => boolean): Promise<{ removed: number; active: number }>;
  /**
   * Removes the jobs with these ids in every state but active, so none keeps a deleted or replaced
   * text and each id is free for a new job at once; `active` counts those running (they re-check
   * what they write, and a completed job of a queue that forgets them on completion leaves nothing).
   */
  removeByIds(queue: QueueOf<J>, jobIds: readonly string[]): Promise<{ removed: number; active: number }>;
  /**
   * Adds a job to `queue` with `data` at each occurrence of the cron `pattern` in `timezone`.
   * Idempotent: calling it again (every worker does, at start) replaces the schedule of that queue
   * rather than adding a second one, and each occurrence yields one job however many processes call it.
   */
  schedule<Q extends QueueOf<J>>(queue: Q, pattern: string, timezone: string, data: J[Q]): Promise<void>;
  /** resolves when no job is waiting or running (tests, `ingest --wait` in-process) */
  idle(): Promise<void>;
  /**
   * Stops consuming (in-flight jobs finish or are handed back) and releases connections; `add` and
   * `consume` reject afterwards. Calling it again does nothing.
   */
  close(): Promise<void>;
}
