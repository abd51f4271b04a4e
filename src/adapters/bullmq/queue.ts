import { ErrorCode, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { BackendUnavailableError, describeDetails, zodDetails } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { workerConnectionOptions } from '../redis/connection.js';
import { parseOrThrow } from '../../validate.js';
import { FORGOTTEN_ON_COMPLETE, JOB_DEFAULTS } from '../../../queues/defaults.js';
import { QUEUE_NAMES, type QueueName } from '../../../queues/names.js';
import { JOB_SCHEMAS, type JobPayload } from '../../../queues/payloads.js';
import { isDoNotRetry } from '../../ports/job-queue.js';
import type { ConsumeOptions, FailedJob, JobCounts, JobQueue, JobSpec, Processor, ProcessorMap } from '../../../queues/queue.js';
import { oneByOne } from '../../../queues/batch.js';

export interface BullMqQueueOptions {
  /** the process's one shared connection, used by every producer; the queue never closes it */
  connection: Redis;
  /** BullMQ's key prefix (RedisKeys.bullPrefix) */
  prefix: string;
  log: Logger;
  /** tries per job before it is kept as failed (default JOB_DEFAULTS.attempts) */
  attempts?: number;
  /** first retry delay, doubled each retry (default JOB_DEFAULTS.backoffMs) */
  backoffMs?: number;
  keepCompleted?: number;
  keepFailed?: number;
  /** a running job's lock; a worker that dies holds its jobs this long at most (default 30 s) */
  lockDurationMs?: number;
  /** how often workers look for jobs whose lock expired and hand them to others (default 30 s) */
  stalledIntervalMs?: number;
  /** how long `close` waits for in-flight jobs before handing them back (default 20 s) */
  shutdownTimeoutMs?: number;
}

/** addBulk is one MULTI; chunks keep each under a few hundred KB of payload. */
const ADD_CHUNK = 500;
const IDLE_POLL_MS = 100;
/** per-minute points of the workers' completed-jobs metric (only its running total is read) */
const METRIC_POINTS = 60;
const DRAIN_POLL_MS = 25;
/** what a worker with no job left gets to close before it is disconnected without waiting */
const CLOSE_GRACE_MS = 2_000;
/** worker connection errors repeat on every retry while Redis is away: log one per interval */
const ERROR_LOG_INTERVAL_MS = 10_000;

interface InFlight {
  job: Job;
  token: string | undefined;
}

/**
 * The JobQueue on BullMQ: one Queue per name, created once and sharing the process's connection;
 * Workers (each with the two connections BullMQ needs, duplicated from one template) consume the
 * queues this process was asked to run. Payloads are validated on both sides: a producer gets a
 * ValidationError naming the field, and a malformed job met by a worker fails at once as an
 * UnrecoverableError instead of being retried.
 *
 * A worker that dies mid-job leaves the job locked for `lockDurationMs`; then the stalled check of
 * any other worker moves it back to wait, and it runs again (processors are idempotent).
 */
export class BullMqQueue implements JobQueue {
  readonly backend = 'bullmq' as const;
  private readonly queues = new Map<QueueName, Queue>();
  private readonly workers = new Map<QueueName, Worker>();
  private readonly inFlight = new Map<string, InFlight>();
  private workerTemplate: Redis | null = null;
  private closed = false;
  private readonly attempts: number;
  private readonly lastErrorLog = new Map<string, number>();

  /** Creates the queues and waits until they answer; rejects when Redis does not. */
  static async create(options: BullMqQueueOptions): Promise<BullMqQueue> {
    const q = new BullMqQueue(options);
    try {
      await Promise.all([...q.queues.values()].map((queue) => queue.waitUntilReady()));
    } catch (err) {
      await q.close();
      throw err;
    }
    return q;
  }

  private constructor(private readonly o: BullMqQueueOptions) {
    this.attempts = o.attempts ?? JOB_DEFAULTS.attempts;
    for (const name of QUEUE_NAMES) {
      const queue = new Queue(name, {
        connection: o.connection,
        prefix: o.prefix,
        defaultJobOptions: {
          attempts: this.attempts,
          backoff: { type: 'exponential', delay: o.backoffMs ?? JOB_DEFAULTS.backoffMs },
          // a completed job of a memory is dropped at once: its text does not outlive it, and its id
          // is free for the memory's next job (a re-add after a delete)
          removeOnComplete: FORGOTTEN_ON_COMPLETE.includes(name) ? true : { count: o.keepCompleted ?? JOB_DEFAULTS.keepCompleted },
          removeOnFail: { count: o.keepFailed ?? JOB_DEFAULTS.keepFailed },
        },
      });
      queue.on('error', (err) => this.logError(`queue:${name}`, err, 'BullMQ queue error'));
      this.queues.set(name, queue);
    }
  }

  private queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  private logError(source: string, err: unknown, msg: string): void {
    const now = Date.now();
    if (now - (this.lastErrorLog.get(source) ?? 0) < ERROR_LOG_INTERVAL_MS) return;
    this.lastErrorLog.set(source, now);
    this.o.log.warn({ source, err: err instanceof Error ? err.message : String(err) }, msg);
  }

  async add<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    const bulk = this.validated(queue, jobs);
    for (let i = 0; i < bulk.length; i += ADD_CHUNK) await this.queue(queue).addBulk(bulk.slice(i, i + ADD_CHUNK));
  }

  /** Every payload is validated before any job is touched: a bad batch changes nothing. One job per id. */
  private validated<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Array<{ name: string; data: unknown; opts: { jobId: string } }> {
    const seen = new Set<string>();
    const bulk: Array<{ name: string; data: unknown; opts: { jobId: string } }> = [];
    for (const j of jobs) {
      const data = parseOrThrow(JOB_SCHEMAS[queue], j.data, `${queue} job ${j.jobId}`);
      if (seen.has(j.jobId)) continue;
      seen.add(j.jobId);
      bulk.push({ name: queue, data, opts: { jobId: j.jobId } });
    }
    return bulk;
  }

  async requeue<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    const bulk = this.validated(queue, jobs);
    const q = this.queue(queue);
    // BullMQ ignores an add whose id is held by a failed or completed job: such a job is removed first
    // (its work is still unfinished in the turn log, or it would not come this way). One state lookup
    // per job, sent together; only the reconciler's pages of pending turns come this way.
    const states = await Promise.all(bulk.map((j) => q.getJobState(j.opts.jobId)));
    const removed = { failed: 0, completed: 0 };
    for (const [i, j] of bulk.entries()) {
      const state = states[i];
      if (state === 'failed' || state === 'completed') removed[state] += await q.remove(j.opts.jobId);
    }
    if (removed.failed > 0) this.o.log.warn({ queue, jobs: removed.failed }, 'failed jobs of turns still unfinished in the turn log are run again');
    if (removed.completed > 0) this.o.log.info({ queue, jobs: removed.completed }, 'completed jobs of turns still unfinished in the turn log are run again');
    for (let i = 0; i < bulk.length; i += ADD_CHUNK) await q.addBulk(bulk.slice(i, i + ADD_CHUNK));
  }

  async consume(processors: ProcessorMap, options: ConsumeOptions): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    // BullMQ duplicates this for each Worker (a command and a blocking connection); the template
    // itself never connects
    this.workerTemplate ??= this.o.connection.duplicate({ ...workerConnectionOptions(), lazyConnect: true });
    const started: Worker[] = [];
    const single = oneByOne(processors);
    for (const name of options.queues) {
      const processor = single[name] as Processor<QueueName> | undefined;
      if (!processor || this.workers.has(name)) continue;
      const worker = new Worker(name, (job: Job, token?: string) => this.run(name, processor, job, token), {
        connection: this.workerTemplate,
        prefix: this.o.prefix,
        concurrency: options.concurrency,
        lockDuration: this.o.lockDurationMs ?? 30_000,
        stalledInterval: this.o.stalledIntervalMs ?? 30_000,
        maxStalledCount: 1,
        autorun: true,
        // counted where the job is finished (its Lua script): the queues whose completed jobs are
        // removed at once still report how many completed (counts())
        metrics: { maxDataPoints: METRIC_POINTS },
      });
      worker.on('error', (err) => this.logError(`worker:${name}`, err, 'BullMQ worker error'));
      worker.on('stalled', (jobId) => this.o.log.warn({ queue: name, jobId }, 'job stalled (its worker died or blocked); moved back to wait'));
      worker.on('failed', (job, err) => {
        if (!job) return;
        const final = err instanceof UnrecoverableError || err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
        const fields = { queue: name, jobId: job.id, attempt: job.attemptsMade, err: err.message };
        if (final) this.o.log.error(fields, 'job failed permanently; kept as failed (neuralcleave jobs failed / jobs retry)');
        else this.o.log.warn(fields, 'job failed; retrying with backoff');
      });
      this.workers.set(name, worker);
      started.push(worker);
    }
    await Promise.all(started.map((w) => w.waitUntilReady()));
  }

  private async run(name: QueueName, processor: Processor<QueueName>, job: Job, token: string | undefined): Promise<unknown> {
    const parsed = JOB_SCHEMAS[name].safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`invalid ${name} job payload: ${describeDetails(zodDetails(parsed.error.issues))}`);
    }
    const key = `${name}/${job.id}`;
    this.inFlight.set(key, { job, token });
    try {
      return await (processor as (d: unknown, m: { jobId: string; attempt: number }) => Promise<unknown>)(parsed.data, {
        jobId: job.id!,
        attempt: job.attemptsMade + 1,
      });
    } catch (err) {
      // the port's queue-neutral error, in the form BullMQ knows
      if (isDoNotRetry(err)) throw new UnrecoverableError(err.message);
      throw err;
    } finally {
      this.inFlight.delete(key);
    }
  }

  async counts(): Promise<Record<QueueName, JobCounts>> {
    const entries = await Promise.all(
      QUEUE_NAMES.map(async (name) => {
        const q = this.queue(name);
        const c = await q.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed');
        const counts: JobCounts = {
          waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
          active: c.active ?? 0,
          delayed: c.delayed ?? 0,
          failed: c.failed ?? 0,
          // completed jobs of these queues are not kept: how many completed is the workers' metric
          completed: FORGOTTEN_ON_COMPLETE.includes(name) ? (await q.getMetrics('completed', 0, 0)).meta.count : (c.completed ?? 0),
        };
        return [name, counts] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<QueueName, JobCounts>;
  }

  async failed(queue: QueueName, limit: number): Promise<FailedJob[]> {
    if (limit <= 0) return [];
    const jobs = await this.queue(queue).getFailed(0, limit - 1);
    return jobs.filter(Boolean).map((j) => ({
      queue,
      jobId: j.id ?? '',
      attempts: j.attemptsMade,
      reason: j.failedReason ?? '',
      failedAt: j.finishedOn ? new Date(j.finishedOn).toISOString() : null,
      data: j.data,
    }));
  }

  /** ids of the failed jobs now (a snapshot: retrying moves them while we iterate) */
  private failedIds(queue: QueueName): Promise<string[]> {
    return this.queue(queue).getRanges(['failed'], 0, -1);
  }

  async retryFailed(queue: QueueName): Promise<number> {
    const q = this.queue(queue);
    let retried = 0;
    const ids = await this.failedIds(queue);
    for (let i = 0; i < ids.length; i += 100) {
      const results = await Promise.allSettled(
        ids.slice(i, i + 100).map(async (id) => {
          const job = await q.getJob(id);
          // a retried job gets its full set of attempts again
          if (job) await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
          return Boolean(job);
        }),
      );
      retried += results.filter((r) => r.status === 'fulfilled' && r.value).length;
    }
    return retried;
  }

  async removeFailed(queue: QueueName, match: (data: unknown) => boolean): Promise<number> {
    const q = this.queue(queue);
    let removed = 0;
    for (const id of await this.failedIds(queue)) {
      const job = await q.getJob(id);
      if (!job || !match(job.data)) continue;
      await job.remove();
      removed++;
    }
    return removed;
  }

  async removeJobs(queue: QueueName, match: (data: unknown) => boolean): Promise<{ removed: number; active: number }> {
    const q = this.queue(queue);
    let removed = 0;
    let active = 0;
    // ids first (a snapshot): removing while paging through jobs would shift the pages
    const ids = await q.getRanges(['waiting', 'prioritized', 'delayed', 'waiting-children', 'completed', 'failed', 'active'], 0, -1);
    for (const id of new Set(ids)) {
      const job = await q.getJob(id);
      if (!job || !match(job.data)) continue;
      try {
        await job.remove();
        removed++;
      } catch {
        // locked by a worker: it is running now; the caller waits and calls again
        active++;
      }
    }
    // the event stream keeps each completed job's return value (a compaction returns its summary) after
    // the job itself is gone, and cannot be told apart by user: an erasure empties the queue's history
    await q.trimEvents(0);
    return { removed, active };
  }

  async removeByIds(queue: QueueName, jobIds: readonly string[]): Promise<{ removed: number; active: number }> {
    const q = this.queue(queue);
    let removed = 0;
    let active = 0;
    await Promise.all(
      [...new Set(jobIds)].map(async (id) => {
        // 0: no such job, or locked by the worker running it
        if ((await q.remove(id)) === 1) removed++;
        else if ((await q.getJobState(id)) === 'active') active++;
      }),
    );
    return { removed, active };
  }

  async schedule<Q extends QueueName>(queue: Q, pattern: string, timezone: string, data: JobPayload<Q>): Promise<void> {
    const payload = parseOrThrow(JOB_SCHEMAS[queue], data, `${queue} schedule`);
    const id = `${queue}-schedule`;
    // one scheduler per queue: every worker upserting it at start leaves one, and BullMQ yields one
    // job per occurrence however many workers run
    try {
      await this.queue(queue).upsertJobScheduler(
        id,
        { pattern, tz: timezone },
        {
          name: queue,
          data: payload,
          opts: {
            attempts: this.attempts,
            backoff: { type: 'exponential', delay: this.o.backoffMs ?? JOB_DEFAULTS.backoffMs },
            removeOnComplete: { count: this.o.keepCompleted ?? JOB_DEFAULTS.keepCompleted },
            removeOnFail: { count: this.o.keepFailed ?? JOB_DEFAULTS.keepFailed },
          },
        },
      );
    } catch (err) {
      if ((err as { code?: unknown }).code !== ErrorCode.SchedulerJobIdCollision) throw err;
      // the occurrence the upsert would queue next already has its job: it is running, or has just
      // been moved on, beside another worker's upsert (a worker started at that moment exited with
      // this). The scheduler is set when it holds this pattern; another one cannot replace it now
      const held = await this.queue(queue).getJobScheduler(id);
      if (held?.pattern !== pattern || held.tz !== timezone) {
        throw new BackendUnavailableError(
          'redis',
          `the ${queue} job scheduler holds ${held?.pattern ?? 'nothing'} (${held?.tz ?? 'no time zone'}), and ${pattern} (${timezone}) cannot replace it while its current occurrence holds the next slot; start the worker again once that run is over`,
          { cause: err },
        );
      }
    }
    this.o.log.info({ queue, pattern, timezone }, 'BullMQ job scheduler set');
  }

  async idle(): Promise<void> {
    for (;;) {
      const counts = await this.counts();
      if (Object.values(counts).every((c) => c.waiting + c.active + c.delayed === 0)) return;
      await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
    }
  }

  /**
   * Graceful: workers stop taking jobs and finish the ones they run; jobs still running after
   * `shutdownTimeoutMs` are handed back (moved to wait for another worker). Then the queues close.
   * The shared connection stays open: its owner closes it.
   *
   * Every wait is bounded: BullMQ's Worker.close and disconnect wait for an `end` event that an
   * ioredis client parked in `reconnecting` (Redis away, or back after an outage) never emits
   * (bullmq#4656, #4065). What is awaited for correctness is our own in-flight jobs; a worker that
   * has none left gets CLOSE_GRACE_MS more, then is disconnected without waiting.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const workers = [...this.workers.values()];
    if (workers.length > 0) {
      const graceful = Promise.allSettled(workers.map((w) => w.close()));
      const timeout = this.o.shutdownTimeoutMs ?? 20_000;
      const drained = await settlesWithin(Promise.race([graceful, this.inFlightDrained()]), timeout);
      const closed = await settlesWithin(graceful, drained ? CLOSE_GRACE_MS : 0);
      if (!closed) {
        const handBack = [...this.inFlight.values()];
        if (handBack.length > 0) {
          this.o.log.warn({ jobs: handBack.length, timeoutMs: timeout }, 'in-flight jobs did not finish in time; handing them back to the queue');
          await settlesWithin(Promise.allSettled(handBack.map(({ job, token }) => job.moveToWait(token))), CLOSE_GRACE_MS);
        } else {
          this.o.log.warn({ graceMs: CLOSE_GRACE_MS }, 'BullMQ workers did not close (a connection still reconnecting to Redis); disconnecting them');
        }
        await settlesWithin(Promise.allSettled(workers.map((w) => w.disconnect())), CLOSE_GRACE_MS);
        // the stuck close never reaches its last steps, whose timers would keep the process alive for
        // ever: pause(true) stops the stalled-job checker; the lock renewal has no public stop
        await settlesWithin(Promise.allSettled(workers.map((w) => w.pause(true))), CLOSE_GRACE_MS);
        for (const w of workers) await (w as unknown as { lockManager?: { close?: () => Promise<void> } }).lockManager?.close?.();
      }
    }
    await settlesWithin(Promise.allSettled([...this.queues.values()].map((q) => q.close())), CLOSE_GRACE_MS);
    this.workerTemplate?.disconnect();
  }

  private async inFlightDrained(): Promise<void> {
    while (this.inFlight.size > 0) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS).unref());
  }
}

/** true when `p` settled within `ms`; the timer never keeps the process alive */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = p.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([settled, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms).unref()))]);
  clearTimeout(timer);
  return result;
}
