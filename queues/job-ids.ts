import { shortHash } from '../src/domain/hash.js';
import type { QueueName } from './names.js';

/**
 * Job ids are derived from the unit of work, so re-enqueueing an unfinished turn does not duplicate
 * a job that is still waiting. BullMQ forbids ':' in custom ids, and user ids may contain anything,
 * hence the hash.
 */
export function jobIdFor(queue: QueueName, key: string): string {
  return `${queue}-${shortHash(key)}`;
}
