import type { QueueName } from './names.js';
import { isBatched, type BatchedProcessor, type JobOutcome, type Processor, type ProcessorMap } from './queue.js';

/** One processor run, as metrics see it. */
export interface JobEvent {
  queue: QueueName;
  jobId: string;
  attempt: number;
  ms: number;
  ok: boolean;
}

/**
 * Wraps each processor so that every run reports its duration and outcome (the API's /metrics);
 * results and errors pass through unchanged, and a throwing observer never fails a job.
 */
export function observeProcessors(processors: ProcessorMap, observe: (event: JobEvent) => void): ProcessorMap {
  const out: ProcessorMap = {};
  const report = (event: JobEvent): void => {
    try {
      observe(event);
    } catch {
      // metrics must never fail a job
    }
  };
  for (const [queue, processor] of Object.entries(processors) as Array<[QueueName, Processor<QueueName> | BatchedProcessor<QueueName> | undefined]>) {
    if (!processor) continue;
    if (isBatched(processor)) {
      // each job of a batch is reported with the batch's duration: it waited for all of it
      const wrapped: BatchedProcessor<QueueName> = {
        maxBatch: processor.maxBatch,
        batch: async (jobs) => {
          const started = performance.now();
          let outcomes: readonly JobOutcome[] | null = null;
          try {
            outcomes = await processor.batch(jobs);
            return outcomes;
          } finally {
            const ms = performance.now() - started;
            jobs.forEach((j, i) => report({ queue, jobId: j.jobId, attempt: j.attempt, ms, ok: outcomes?.[i]?.ok === true }));
          }
        },
      };
      (out as Record<QueueName, BatchedProcessor<QueueName>>)[queue] = wrapped;
      continue;
    }
    const wrapped: Processor<QueueName> = async (data, meta) => {
      const started = performance.now();
      let ok = false;
      try {
        const result = await processor(data, meta);
        ok = true;
        return result;
      } finally {
        report({ queue, jobId: meta.jobId, attempt: meta.attempt, ms: performance.now() - started, ok });
      }
    };
    (out as Record<QueueName, Processor<QueueName>>)[queue] = wrapped;
  }
  return out;
}
