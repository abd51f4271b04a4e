/**
 * The package's `./queues` export, for programs that enqueue work themselves: everything of queues/
 * and both queue backends (docs/architecture.md, layers and folders).
 */
export * from '../../queues/index.js';
export { BullMqQueue } from '../adapters/bullmq/queue.js';
export { InProcessQueue } from '../adapters/in-process/queue.js';
