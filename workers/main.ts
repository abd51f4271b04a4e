import { wire } from '../src/app.js';
import type { Config } from '../src/config/schema.js';
import type { Logger } from '../src/logger.js';
import { onShutdown } from '../src/cli/shutdown.js';
import type { QueueName } from '../queues/names.js';
import { createProcessors } from './processors.js';

export interface WorkerProcessOptions {
  /** the queues to consume; those this build has no processor for are skipped */
  queues: readonly QueueName[];
  /** jobs per queue at once (default worker_concurrency) */
  concurrency?: number;
}

/**
 * The worker process (`neuralcleave worker`): wires the services with Redis required — a worker
 * without the shared queue would consume nothing anyone else enqueues, so no Redis is a
 * configuration error (exit 2), not a fallback — consumes the chosen BullMQ queues, and on
 * SIGTERM/SIGINT finishes its in-flight jobs (handing back what is still running after
 * worker_shutdown_timeout_ms) before it exits. Resolves once it has shut down.
 */
export async function runWorkerProcess(config: Config, options: WorkerProcessOptions, log: Logger): Promise<void> {
  const services = await wire(config, {
    logger: log,
    runWorkers: true,
    workerQueues: options.queues,
    ...(options.concurrency !== undefined ? { workerConcurrency: options.concurrency } : {}),
    requireRedis: true,
    // every worker upserts the same BullMQ job scheduler: one job per occurrence however many run
    scheduleArchival: options.queues.includes('archive'),
  });
  const available = new Set(Object.keys(createProcessors(services.processorDeps)));
  const consumed = options.queues.filter((q) => available.has(q));
  const skipped = options.queues.filter((q) => !available.has(q));
  const concurrency = options.concurrency ?? config.worker_concurrency;
  const backends = services.backends();
  log.info({ queues: consumed, skipped, concurrency, sqlite_path: config.sqlite_path, semantic: backends.semantic.backend }, 'worker consuming');
  // the line scripts and tests wait for
  process.stderr.write(`worker ready: consuming ${consumed.join(',') || 'nothing'} (concurrency ${concurrency}); pid ${process.pid}\n`);
  await onShutdown(log, () => services.close());
  log.info('worker stopped');
  // a library timer left behind must not keep a stopped worker alive (an orchestrator would SIGKILL it)
  setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
}
