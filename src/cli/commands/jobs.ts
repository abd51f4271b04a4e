import type { Command } from 'commander';
import { QUEUE_NAMES, type QueueName } from '../../../queues/names.js';
import { UsageError, parseIntOption, printJson, type GlobalOptions } from '../context.js';
import { withMemory, type CliServices } from '../../roots/maintenance.js';

function parseQueue(value: string): QueueName {
  if (!(QUEUE_NAMES as readonly string[]).includes(value)) throw new UsageError(`unknown queue "${value}"; queues are ${QUEUE_NAMES.join(', ')}`);
  return value as QueueName;
}

/** An in-process queue's failed jobs live in the process that ran them: say so instead of printing nothing. */
function noteInProcess(s: Pick<CliServices, 'queue'>): void {
  if (s.queue.backend === 'in-process') {
    process.stderr.write('note: no Redis — the queue is in-process, so failed jobs live in the process that ran them (see `serve`\'s /health)\n');
  }
}

/** `jobs failed` and `jobs retry`: failed jobs stay inspectable and can be run again. */
export function registerJobs(program: Command, globals: () => GlobalOptions): Command {
  const jobs = program.command('jobs').description('inspect and retry failed queue jobs');

  jobs
    .command('failed')
    .description('list failed jobs, newest first')
    .option('--queue <name>', `only this queue (${QUEUE_NAMES.join(', ')})`, parseQueue)
    .option('--limit <n>', 'at most this many per queue', parseIntOption('--limit', 1, 100_000), 50)
    .option('--json', 'print a JSON array')
    .action(async (o: { queue?: QueueName; limit: number; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false }, async (_m, s) => {
        noteInProcess(s);
        const queues = o.queue ? [o.queue] : [...QUEUE_NAMES];
        const failed = (await Promise.all(queues.map((q) => s.queue.failed(q, o.limit)))).flat();
        if (o.json) return printJson(failed);
        for (const j of failed) {
          const turn = (j.data as { turn_id?: unknown } | null)?.turn_id;
          process.stdout.write(
            `${j.queue.padEnd(8)} ${j.jobId}  attempts ${j.attempts}  ${j.failedAt ?? '-'}${typeof turn === 'string' ? `  turn ${turn}` : ''}\n    ${j.reason}\n`,
          );
        }
        if (failed.length === 0) process.stderr.write('no failed jobs\n');
      });
    });

  jobs
    .command('retry')
    .description("run a queue's failed jobs again, each with its full number of attempts")
    .requiredOption('--queue <name>', `the queue (${QUEUE_NAMES.join(', ')})`, parseQueue)
    .option('--json', 'print {queue, retried} as JSON')
    .action(async (o: { queue: QueueName; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false }, async (_m, s) => {
        noteInProcess(s);
        const retried = await s.queue.retryFailed(o.queue);
        if (o.json) return printJson({ queue: o.queue, retried });
        process.stdout.write(`retried ${retried} failed ${o.queue} job${retried === 1 ? '' : 's'}\n`);
      });
    });

  return jobs;
}
