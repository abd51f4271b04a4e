import type { QueueName } from './names.js';

/**
 * Queues whose jobs carry a memory's text or name it (embed, persist): a completed one is removed at
 * once rather than kept for inspection, so no text outlives its job in Redis and a re-added id gets a
 * new job at once (BullMQ ignores an add whose id it still keeps). Their progress is in the turn log.
 */
export const FORGOTTEN_ON_COMPLETE: readonly QueueName[] = ['embed', 'persist'];

/** Default job options for every backend: retried with exponential backoff, bounded history. */
export const JOB_DEFAULTS = {
  attempts: 5,
  backoffMs: 1000,
  /** completed jobs kept for inspection (compact, archive; see FORGOTTEN_ON_COMPLETE) */
  keepCompleted: 1000,
  /** failed jobs kept for inspection and retry */
  keepFailed: 10_000,
} as const;
