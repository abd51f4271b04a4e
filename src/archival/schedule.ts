import type { JobQueue } from '../../queues/queue.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { nextRuns } from './cron.js';

/**
 * Registers the archival schedule (docs/architecture.md, compaction and archival) on the queue: with BullMQ a job scheduler in Redis,
 * upserted by every worker at start — one scheduler id, so however many workers register it, each
 * occurrence yields one job, which one worker takes; without Redis an in-process cron in the `serve`
 * process. Safe to call any number of times.
 */
export async function scheduleArchival(queue: JobQueue, config: Pick<Config, 'archival_cron' | 'archival_timezone'>, log: Logger): Promise<void> {
  await queue.schedule('archive', config.archival_cron, config.archival_timezone, { dry_run: false, trigger: 'schedule' });
  log.info(
    { cron: config.archival_cron, timezone: config.archival_timezone, backend: queue.backend, next: nextArchival(config)?.toISOString() },
    'archival scheduled',
  );
}

/** The next occurrence of the archival job (doctor). */
export function nextArchival(config: Pick<Config, 'archival_cron' | 'archival_timezone'>, from = new Date()): Date | null {
  return nextRuns(config.archival_cron, config.archival_timezone, 1, from)[0] ?? null;
}
