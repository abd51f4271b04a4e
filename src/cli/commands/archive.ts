import type { Command } from 'commander';
import type { ArchiveReport } from '../../archival/archiver.js';
import { UserIdSchema } from '../../domain/turn.js';
import { parseOrThrow } from '../../validate.js';
import { UsageError, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { progressBar } from '../progress.js';
import { count } from '../plural.js';

function describe(r: ArchiveReport): string {
  const lines: string[] = [];
  for (const s of r.sessions) {
    const where = `${s.user_id}/${s.session_id} (last turn ${s.last_at.slice(0, 10)})`;
    if (s.status === 'would_archive') lines.push(`would archive ${where}: ${s.replaced} memor${s.replaced === 1 ? 'y' : 'ies'} into ${s.archive_id}, ${s.pinned_kept} pinned kept`);
    else if (s.status === 'archived') lines.push(`archived ${where}: ${s.replaced} memor${s.replaced === 1 ? 'y' : 'ies'} replaced by ${s.archive_id} (${s.summarizer}), ${s.pinned_kept} pinned kept`);
    else if (s.status === 'changed') lines.push(`skipped ${where}: it changed while being archived; the next run takes it`);
    else lines.push(`FAILED ${where}: ${s.error}`);
  }
  const verb = r.dry_run ? 'would archive' : 'archived';
  lines.push(`${verb} ${count(r.dry_run ? r.sessions.length : r.archived, 'session')} inactive since before ${r.cutoff}${r.dry_run ? ' (dry run: nothing changed)' : `; ${count(r.replaced, 'memory')} replaced`}${r.failed > 0 ? `; ${r.failed} failed` : ''}`);
  if (r.text_index) lines.push(`text index merged: ${count(r.text_index.parts_before, 'piece')} → ${r.text_index.parts_after} in ${Math.round(r.text_index.ms)} ms`);
  return `${lines.join('\n')}\n`;
}

/** `memory archive`: the archival job of docs/architecture.md, compaction and archival, run by hand in this process, with a progress bar. */
export function registerArchive(memory: Command, globals: () => GlobalOptions): void {
  memory
    .command('archive')
    .description('condense each session inactive for archival_inactive_days into one archive entry (pinned memories stay)')
    .option('--inactive-days <n>', 'override archival_inactive_days', (v: string) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || n <= 0) throw new UsageError(`--inactive-days must be a positive number, got "${v}"`);
      return n;
    })
    .option('--user <id>', "only this user's sessions")
    .option('--dry-run', 'report what would be archived; change nothing')
    .option('--json', 'print the report as JSON')
    .action(async (o: { inactiveDays?: number; user?: string; dryRun?: boolean; json?: boolean }) => {
      if (o.user !== undefined) parseOrThrow(UserIdSchema, o.user, '--user');
      // workers run here with an in-process queue, so the archives' embed jobs finish before exit
      await withMemory(globals(), { reconcile: false }, async (_m, s) => {
        let bar: ReturnType<typeof progressBar> | null = null;
        const report = await s.archiver.run({
          ...(o.inactiveDays !== undefined ? { inactiveDays: o.inactiveDays } : {}),
          ...(o.user !== undefined ? { userId: o.user } : {}),
          dryRun: Boolean(o.dryRun),
          trigger: 'manual',
          onProgress: (done, total) => {
            if (total === 0) return;
            bar ??= progressBar(o.dryRun ? 'archive (dry run)' : 'archive', total);
            bar.update(done);
          },
        });
        (bar as ReturnType<typeof progressBar> | null)?.stop();
        if (o.json) printJson(report);
        else process.stdout.write(describe(report));
        if (report.failed > 0) process.exitCode = 1;
      });
    });
}
