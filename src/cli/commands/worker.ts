import type { Command } from 'commander';
import { QUEUE_NAMES, type QueueName } from '../../../queues/names.js';
import { runWorkerProcess } from '../../roots/worker.js';
import { createLogger } from '../../logger.js';
import { UsageError, configFrom, parseIntOption, type GlobalOptions } from '../context.js';

/** `embed,persist` → the queue names, each checked. */
export function parseQueueList(value: string): QueueName[] {
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError('--queues needs at least one queue name');
  for (const n of names) {
    if (!(QUEUE_NAMES as readonly string[]).includes(n)) throw new UsageError(`unknown queue "${n}" in --queues; queues are ${QUEUE_NAMES.join(', ')}`);
  }
  return [...new Set(names)] as QueueName[];
}

export function registerWorker(program: Command, globals: () => GlobalOptions): void {
  program
    .command('worker')
    .description('a worker process consuming the shared BullMQ queues (needs Redis); run as many as you like')
    .option('--queues <list>', `comma-separated queues to consume (default ${QUEUE_NAMES.join(',')})`, parseQueueList)
    .option('--concurrency <n>', 'jobs per queue at once (default worker_concurrency)', parseIntOption('--concurrency', 1, 1000))
    .action(async (o: { queues?: QueueName[]; concurrency?: number }) => {
      const config = configFrom(globals());
      const log = createLogger(config.log_level);
      await runWorkerProcess(config, { queues: o.queues ?? [...QUEUE_NAMES], ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}) }, log);
    });
}
