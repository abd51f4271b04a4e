/**
 * The typed producer side of the queues, for programs that enqueue work themselves (docs/architecture.md, layers and folders): queue
 * names, zod job payloads, deterministic job ids, default job options, and both queue backends.
 */
export { QUEUE_NAMES, SQLITE_QUEUES, type QueueName } from './names.js';
export * from './payloads.js';
export { jobIdFor } from './job-ids.js';
export { JOB_DEFAULTS } from './defaults.js';
export type { JobQueue, JobSpec, JobCounts, FailedJob, Processor, ProcessorMap, ConsumeOptions } from './queue.js';
export { BullMqQueue } from '../src/adapters/bullmq/queue.js';
export { InProcessQueue } from '../src/adapters/in-process/queue.js';
export { embedJob, persistJob, type Embeddable } from './producers.js';
