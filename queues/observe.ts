import type { QueueName } from './names.js';
import type { Processor, ProcessorMap } from './queue.js';

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
  for (const [queue, processor] of Object.entries(processors) as Array<[QueueName, Processor<QueueName> | undefined]>) {
    if (!processor) continue;
    const wrapped: Processor<QueueName> = async (data, meta) => {
      const started = performance.now();
      let ok = false;
      try {
        const result = await processor(data, meta);
        ok = true;
        return result;
      } finally {
        try {
          observe({ queue, jobId: meta.jobId, attempt: meta.attempt, ms: performance.now() - started, ok });
        } catch {
          // metrics must never fail a job
        }
      }
    };
    (out as Record<QueueName, Processor<QueueName>>)[queue] = wrapped;
  }
  return out;
}
