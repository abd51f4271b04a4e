import type * as Port from '../src/ports/job-queue.js';
import type { QueueName } from './names.js';
import type { Jobs } from './payloads.js';

/** The job-queue port (src/ports/job-queue.ts) over this project's queues. */
export type JobQueue = Port.JobQueue<Jobs>;
export type JobSpec<Q extends QueueName> = Port.JobSpec<Jobs, Q>;
export type Processor<Q extends QueueName> = Port.Processor<Jobs, Q>;
export type BatchedProcessor<Q extends QueueName> = Port.BatchedProcessor<Jobs, Q>;
export type BatchJob<Q extends QueueName> = Port.BatchJob<Jobs, Q>;
export type ProcessorMap = Port.ProcessorMap<Jobs>;
export type FailedJob = Port.FailedJob<Jobs>;
export type ConsumeOptions = Port.ConsumeOptions<Jobs>;
export type { JobCounts, JobOutcome } from '../src/ports/job-queue.js';
export { isBatched } from '../src/ports/job-queue.js';
export { DoNotRetryError } from '../src/ports/job-queue.js';
