import type { Command } from 'commander';
import { printJson, withMemory, type GlobalOptions } from '../context.js';
import { healthReport } from '../../health.js';

export function registerDoctor(program: Command, globals: () => GlobalOptions): void {
  program
    .command('doctor')
    .description("each tier's backend, the embedder, the queues, the turn log")
    .option('--json', 'print the report as JSON')
    .action(async (o: { json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false }, async (_m, s) => {
        await s.embedders.ready();
        const report = await healthReport(s);
        if (o.json) return printJson(report);
        const out: string[] = [];
        for (const [part, b] of Object.entries(report.backends)) out.push(`${part.padEnd(11)} ${b.backend} (${b.state})${b.detail ? ` — ${b.detail}` : ''}`);
        out.push(`sqlite      ${report.sqlite_path}`);
        out.push(`turn log    ${report.turn_log.total} turns; pending embed ${report.turn_log.pending_embed}, persist ${report.turn_log.pending_persist}`);
        for (const [q, c] of Object.entries(report.queues)) if (c) out.push(`queue ${q.padEnd(8)} waiting ${c.waiting}, active ${c.active}, delayed ${c.delayed}, failed ${c.failed}`);
        process.stdout.write(`${out.join('\n')}\n`);
      });
    });
}
