/**
 * The typed producer side of the queues (docs/architecture.md, layers and folders): queue names, zod
 * job payloads, deterministic job ids, default job options. The package's `./queues` export adds
 * both queue backends (src/roots/queues.ts): queues/ itself imports no adapter.
 */
export { QUEUE_NAMES, SQLITE_QUEUES, type QueueName } from './names.js';
export * from './payloads.js';
export { jobIdFor } from './job-ids.js';
export { JOB_DEFAULTS } from './defaults.js';
export type { JobQueue, JobSpec, JobCounts, FailedJob, Processor, ProcessorMap, ConsumeOptions } from './queue.js';
export { embedJob, persistJob, type Embeddable } from './producers.js';
