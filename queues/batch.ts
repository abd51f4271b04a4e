import { isBatched, type BatchedProcessor, type BatchJob, type Processor, type ProcessorMap } from './queue.js';
import type { QueueName } from './names.js';

interface Waiting<Q extends QueueName> {
  job: BatchJob<Q>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * A batched processor as a one-job Processor, for a queue backend that starts its jobs one by one
 * (p-queue, a BullMQ Worker): the jobs started in the same event-loop turn (or until `maxBatch`) go to
 * `batch` together, and each job's call settles with its own outcome — so the backend's retries,
 * failure records and concurrency bound stay per job. The batch is sent on `setImmediate`, after the
 * microtasks in which a backend starts the next jobs as the previous ones end.
 *
 * `spacingMs`: a batch begins at least this long after the one before; the jobs started meanwhile
 * wait and go together (a lone job after a quiet spell goes at once). For a backend whose every
 * pending job can start (the in-process queue): each batch's writes are one commit, and a commit
 * writes every page it changed, so batches of a tick's jobs under a stream of single-turn writes
 * wrote twice the pages (docs/bench-report.md, round 40). A backend that starts at most its
 * concurrency's worth would only wait: it keeps 0.
 */
export function coalesced<Q extends QueueName>(p: BatchedProcessor<Q>, spacingMs = 0): Processor<Q> {
  let waiting: Array<Waiting<Q>> = [];
  let scheduled = false;
  let lastBatch = Number.NEGATIVE_INFINITY;
  const flush = (): void => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    lastBatch = performance.now();
    Promise.resolve()
      .then(() => p.batch(batch.map((w) => w.job)))
      .then(
        (outcomes) =>
          batch.forEach((w, i) => {
            const o = outcomes[i];
            if (!o) w.reject(new Error(`the ${batch.length}-job batch answered ${outcomes.length} outcomes`));
            else if (o.ok) w.resolve(o.value);
            else w.reject(o.error);
          }),
        (err: unknown) => batch.forEach((w) => w.reject(err)),
      );
  };
  return (data, meta) =>
    new Promise((resolve, reject) => {
      waiting.push({ job: { data, jobId: meta.jobId, attempt: meta.attempt }, resolve, reject });
      if (waiting.length >= p.maxBatch) flush();
      else if (!scheduled) {
        scheduled = true;
        const wait = lastBatch + spacingMs - performance.now();
        if (wait > 0) setTimeout(flush, wait);
        else setImmediate(flush);
      }
    });
}

/** Every processor of the map as a one-job Processor (batched ones coalesced, `spacingMs` apart). */
export function oneByOne(processors: ProcessorMap, spacingMs = 0): { [Q in QueueName]?: Processor<Q> } {
  const out: { [Q in QueueName]?: Processor<Q> } = {};
  for (const [q, p] of Object.entries(processors) as Array<[QueueName, Processor<QueueName> | BatchedProcessor<QueueName> | undefined]>) {
    if (p) (out as Record<QueueName, Processor<QueueName>>)[q] = isBatched(p) ? coalesced(p, spacingMs) : p;
  }
  return out;
}
