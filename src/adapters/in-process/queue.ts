import { Cron } from 'croner';
import PQueue from 'p-queue';
import type { Logger } from '../../logger.js';
import { isDoNotRetry } from '../../ports/job-queue.js';
import { parseOrThrow } from '../../validate.js';
import { JOB_DEFAULTS } from '../../../queues/defaults.js';
import { QUEUE_NAMES, type QueueName } from '../../../queues/names.js';
import { JOB_SCHEMAS } from '../../../queues/payloads.js';
import type { JobPayload } from '../../../queues/payloads.js';
import type { ConsumeOptions, FailedJob, JobCounts, JobQueue, JobSpec, Processor, ProcessorMap } from '../../../queues/queue.js';
import { oneByOne } from '../../../queues/batch.js';

interface PendingJob {
  queue: QueueName;
  jobId: string;
  data: unknown;
  attempt: number;
  /** distinguishes a removed job from a later one with the same id */
  seq?: number;
}

export interface InProcessQueueOptions {
  attempts?: number;
  backoffMs?: number;
}

/**
 * Every pending job of this queue can start at once, so a batched processor's batch holds what arrived
 * since the last: at most one batch per queue every this many ms under a stream of writes, with about
 * half the pages committed per turn of a tick's batches (docs/bench-report.md, round 40).
 */
const BATCH_SPACING_MS = 25;

/**
 * The in-process queue: one p-queue per queue name, running the same processors as BullMQ workers
 * inside this process. Jobs added before `consume` wait for it. Not durable: the turn log re-enqueues
 * unfinished turns after a restart.
 */
export class InProcessQueue implements JobQueue {
  readonly backend = 'in-process' as const;
  private readonly queues = new Map<QueueName, PQueue>();
  private readonly waiting = new Map<QueueName, PendingJob[]>();
  private readonly live = new Set<string>();
  private readonly failedJobs = new Map<QueueName, FailedJob[]>();
  private readonly stats = new Map<QueueName, { completed: number; delayed: number }>();
  /** batched processors coalesced: p-queue starts jobs one by one, the batch gathers those started together */
  private processors: { [Q in QueueName]?: Processor<Q> } = {};
  private consuming = new Set<QueueName>();
  private retryTimers = new Set<NodeJS.Timeout>();
  /** seq of the jobs removed while inside p-queue or waiting for a retry: skipped when their turn comes */
  private readonly cancelled = new Set<number>();
  /** data of the jobs running now, by queue/jobId */
  private readonly running = new Map<string, unknown>();
  /** the jobs dispatched or waiting for a retry, not yet running, by queue/jobId */
  private readonly queued = new Map<string, { seq: number; data: unknown }>();
  private seq = 0;
  private readonly schedules = new Map<QueueName, Cron>();
  private closed = false;
  private readonly attempts: number;
  private readonly backoffMs: number;

  constructor(
    private readonly log: Logger,
    options: InProcessQueueOptions = {},
  ) {
    this.attempts = options.attempts ?? JOB_DEFAULTS.attempts;
    this.backoffMs = options.backoffMs ?? JOB_DEFAULTS.backoffMs;
    for (const q of QUEUE_NAMES) {
      this.waiting.set(q, []);
      this.failedJobs.set(q, []);
      this.stats.set(q, { completed: 0, delayed: 0 });
    }
  }

  async add<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    // every payload is validated before any is added: a bad batch adds nothing (as on BullMQ)
    const parsed = jobs.map((j) => ({ jobId: j.jobId, data: parseOrThrow(JOB_SCHEMAS[queue], j.data, `${queue} job ${j.jobId}`) }));
    for (const j of parsed) {
      const key = `${queue}/${j.jobId}`;
      if (this.live.has(key)) continue;
      this.live.add(key);
      this.dispatch({ queue, jobId: j.jobId, data: j.data, attempt: 1 });
    }
  }

  /** A job kept as failed is taken out first; a completed one has already left `live`, so `add` runs it again. */
  async requeue<Q extends QueueName>(queue: Q, jobs: ReadonlyArray<JobSpec<Q>>): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    for (const j of jobs) parseOrThrow(JOB_SCHEMAS[queue], j.data, `${queue} job ${j.jobId}`);
    const ids = new Set(jobs.map((j) => j.jobId));
    const failed = this.failedJobs.get(queue)!;
    const keep = failed.filter((f) => !ids.has(f.jobId));
    if (keep.length < failed.length) {
      this.failedJobs.set(queue, keep);
      for (const f of failed) if (ids.has(f.jobId)) this.live.delete(`${queue}/${f.jobId}`);
      this.log.warn({ queue, jobs: failed.length - keep.length }, 'failed jobs of turns still unfinished in the turn log are run again');
    }
    return this.add(queue, jobs);
  }

  async consume(processors: ProcessorMap, options: ConsumeOptions): Promise<void> {
    if (this.closed) throw new Error('queue is closed');
    this.processors = { ...this.processors, ...oneByOne(processors, BATCH_SPACING_MS) };
    for (const q of options.queues) {
      if (!this.processors[q]) continue;
      this.queues.set(q, new PQueue({ concurrency: options.concurrency }));
      this.consuming.add(q);
      const backlog = this.waiting.get(q)!.splice(0);
      for (const job of backlog) this.dispatch(job);
    }
  }

  private dispatch(job: PendingJob): void {
    job.seq ??= ++this.seq;
    this.queued.set(`${job.queue}/${job.jobId}`, { seq: job.seq, data: job.data });
    const pq = this.queues.get(job.queue);
    if (!pq || !this.consuming.has(job.queue)) {
      this.waiting.get(job.queue)!.push(job);
      return;
    }
    void pq.add(() => this.run(job));
  }

  private async run(job: PendingJob): Promise<void> {
    const processor = this.processors[job.queue] as ((d: unknown, m: { jobId: string; attempt: number }) => Promise<unknown>) | undefined;
    const key = `${job.queue}/${job.jobId}`;
    if (job.seq !== undefined && this.cancelled.delete(job.seq)) return;
    if (this.queued.get(key)?.seq === job.seq) this.queued.delete(key);
    this.running.set(key, job.data);
    try {
      await processor!(job.data, { jobId: job.jobId, attempt: job.attempt });
      this.stats.get(job.queue)!.completed++;
      this.live.delete(key);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (job.attempt < this.attempts && !this.closed && !isDoNotRetry(err)) {
        const delay = this.backoffMs * 2 ** (job.attempt - 1);
        this.log.warn({ queue: job.queue, jobId: job.jobId, attempt: job.attempt, delay, err: reason }, 'job failed; retrying');
        const stats = this.stats.get(job.queue)!;
        stats.delayed++;
        this.queued.set(key, { seq: job.seq!, data: job.data });
        const timer = setTimeout(() => {
          this.retryTimers.delete(timer);
          stats.delayed--;
          this.dispatch({ ...job, attempt: job.attempt + 1 });
        }, delay);
        this.retryTimers.add(timer);
        return;
      }
      this.log.error({ queue: job.queue, jobId: job.jobId, attempts: job.attempt, err: reason }, 'job failed permanently');
      // kept as failed, its id stays taken (as on BullMQ) until it is retried, removed or requeued
      const failed = this.failedJobs.get(job.queue)!;
      failed.push({ queue: job.queue, jobId: job.jobId, attempts: job.attempt, reason, failedAt: new Date().toISOString(), data: job.data });
      if (failed.length > JOB_DEFAULTS.keepFailed) this.live.delete(`${job.queue}/${failed.shift()!.jobId}`);
    } finally {
      this.running.delete(key);
    }
  }

  async counts(): Promise<Record<QueueName, JobCounts>> {
    const out = {} as Record<QueueName, JobCounts>;
    for (const q of QUEUE_NAMES) {
      const pq = this.queues.get(q);
      out[q] = {
        waiting: (pq?.size ?? 0) + this.waiting.get(q)!.length,
        active: pq?.pending ?? 0,
        delayed: this.stats.get(q)!.delayed,
        failed: this.failedJobs.get(q)!.length,
        completed: this.stats.get(q)!.completed,
      };
    }
    return out;
  }

  async failed(queue: QueueName, limit: number): Promise<FailedJob[]> {
    if (limit <= 0) return [];
    return this.failedJobs.get(queue)!.slice(-limit).reverse();
  }

  async retryFailed(queue: QueueName): Promise<number> {
    const jobs = this.failedJobs.get(queue)!.splice(0);
    for (const j of jobs) {
      this.live.add(`${queue}/${j.jobId}`);
      this.dispatch({ queue, jobId: j.jobId, data: j.data, attempt: 1 });
    }
    return jobs.length;
  }

  async removeFailed(queue: QueueName, match: (data: unknown) => boolean): Promise<number> {
    const list = this.failedJobs.get(queue)!;
    const keep = list.filter((j) => !match(j.data));
    for (const j of list) if (match(j.data)) this.live.delete(`${queue}/${j.jobId}`);
    this.failedJobs.set(queue, keep);
    return list.length - keep.length;
  }

  async removeJobs(queue: QueueName, match: (data: unknown) => boolean): Promise<{ removed: number; active: number }> {
    return this.removeWhere(queue, (_jobId, data) => match(data));
  }

  async removeByIds(queue: QueueName, jobIds: readonly string[]): Promise<{ removed: number; active: number }> {
    const ids = new Set(jobIds);
    return this.removeWhere(queue, (jobId) => ids.has(jobId));
  }

  private removeWhere(queue: QueueName, match: (jobId: string, data: unknown) => boolean): { removed: number; active: number } {
    const failed = this.failedJobs.get(queue)!;
    const keepFailed = failed.filter((j) => !match(j.jobId, j.data));
    for (const j of failed) if (match(j.jobId, j.data)) this.live.delete(`${queue}/${j.jobId}`);
    this.failedJobs.set(queue, keepFailed);
    let removed = failed.length - keepFailed.length;
    const backlog = this.waiting.get(queue)!;
    const keep = backlog.filter((j) => !match(j.jobId, j.data));
    removed += backlog.length - keep.length;
    for (const j of backlog) {
      if (!match(j.jobId, j.data)) continue;
      this.live.delete(`${queue}/${j.jobId}`);
      this.queued.delete(`${queue}/${j.jobId}`);
    }
    this.waiting.set(queue, keep);
    // jobs inside p-queue (or waiting for a retry) cannot be taken out: they are skipped when their turn
    // comes, and their id is free at once for a new job
    for (const [key, q] of [...this.queued]) {
      if (!key.startsWith(`${queue}/`) || !match(key.slice(queue.length + 1), q.data)) continue;
      this.cancelled.add(q.seq);
      this.queued.delete(key);
      this.live.delete(key);
      removed++;
    }
    let active = 0;
    for (const [key, data] of this.running) if (key.startsWith(`${queue}/`) && match(key.slice(queue.length + 1), data)) active++;
    return { removed, active };
  }

  async schedule<Q extends QueueName>(queue: Q, pattern: string, timezone: string, data: JobPayload<Q>): Promise<void> {
    parseOrThrow(JOB_SCHEMAS[queue], data, `${queue} schedule`);
    this.schedules.get(queue)?.stop();
    const cron = new Cron(pattern, { timezone, unref: true }, (self: Cron) => {
      // one job id per occurrence: a slow occurrence still running is not started twice
      const at = (self.currentRun() ?? new Date()).toISOString();
      this.add(queue, [{ jobId: `${queue}-schedule-${at.replace(/[:.]/g, '-')}`, data }]).catch((err: unknown) =>
        this.log.error({ queue, err: (err as Error).message }, 'scheduled job could not be added'),
      );
    });
    this.schedules.set(queue, cron);
    this.log.info({ queue, pattern, timezone, next: cron.nextRun()?.toISOString() }, 'in-process schedule set');
  }

  async idle(): Promise<void> {
    for (;;) {
      await Promise.all([...this.queues.values()].map((pq) => pq.onIdle()));
      const busy = [...this.queues.values()].some((pq) => pq.size > 0 || pq.pending > 0) || this.retryTimers.size > 0;
      if (!busy) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const cron of this.schedules.values()) cron.stop();
    this.schedules.clear();
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    await Promise.all([...this.queues.values()].map((pq) => pq.onIdle()));
  }
}
