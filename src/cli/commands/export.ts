import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { UserIdSchema } from '../../domain/turn.js';
import { ValidationError } from '../../errors.js';
import type { ExportHeader } from '../../memory/export.js';
import { parseOrThrow } from '../../validate.js';
import { UsageError, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { jsonLines } from '../jsonl.js';
import { progressBar } from '../progress.js';
import { count } from '../plural.js';

async function write(out: Writable, line: string): Promise<void> {
  if (!out.write(line)) await once(out, 'drain');
}

/** `export --user U [FILE]` and `import FILE`: the portable JSONL dump of one user (format in src/memory/export.ts). */
export function registerExport(program: Command, globals: () => GlobalOptions): void {
  program
    .command('export')
    .description("write a user's memories (turns, entries, summaries, archives, short-term sessions) as versioned JSON Lines")
    .requiredOption('--user <id>', 'the user to export')
    .argument('[file]', 'the file to write (default: stdout); written whole or not at all')
    .action(async (file: string | undefined, o: { user: string }) => {
      const user = parseOrThrow(UserIdSchema, o.user, '--user');
      await withMemory(globals(), { reconcile: false, runWorkers: false, readOnly: true }, async (m) => {
        // to a temporary file renamed at the end: an interrupted export leaves no file that looks whole;
        // owner-only, since it holds someone's conversations
        const tmp = file ? `${file}.partial-${process.pid}` : null;
        const out: Writable = tmp ? createWriteStream(tmp, { mode: 0o600 }) : process.stdout;
        let bar: ReturnType<typeof progressBar> | null = null;
        let n = 0;
        try {
          for await (const record of m.exportUser(user)) {
            if ('format' in record) {
              const c = (record as ExportHeader).counts!;
              bar = progressBar('export', c.turns + c.entries + c.short_term);
            } else bar?.update(++n);
            await write(out, `${JSON.stringify(record)}\n`);
          }
          if (tmp) {
            out.end();
            await once(out, 'finish');
            renameSync(tmp, file!);
          }
        } catch (err) {
          if (tmp) {
            out.destroy();
            rmSync(tmp, { force: true });
          }
          throw err;
        } finally {
          bar?.stop();
        }
        process.stderr.write(`exported ${count(n, 'record')} of user "${user}"${file ? ` to ${file}` : ''}\n`);
      });
    });

  program
    .command('import')
    .description('restore an export: validated whole first, then written; importing it again changes nothing')
    .argument('<file>', 'a file written by `neuralcleave export`')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, o: { json?: boolean }) => {
      const values: unknown[] = [];
      const lines: number[] = [];
      try {
        // the same byte rules as ingest: a leading BOM is skipped, a line of invalid UTF-8 is refused
        for await (const l of jsonLines(file)) {
          if (l.problem) throw new ValidationError(`${file}:${l.line}: ${l.problem}`, [{ path: `line ${l.line}`, message: l.problem }]);
          values.push(l.value);
          lines.push(l.line);
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${file}`);
        throw err;
      }
      // workers run here with an in-process queue: the restored memories are embedded before exit
      await withMemory(globals(), { reconcile: false, autoCompact: false }, async (m) => {
        const r = await m.importRecords(values, { locate: (i) => `${file}:${lines[i]}` });
        if (o.json) return printJson(r);
        process.stdout.write(
          `imported user "${r.user_id}" from ${file}: ${count(r.turns.new, 'new turn')} (${r.turns.already_stored} already stored), ` +
            `${count(r.entries.new, 'new entry')} (${r.entries.already_stored} already stored), ` +
            `${count(r.short_term_sessions, 'short-term session')}; ${count(r.embeds_enqueued, 'embedding')} queued\n`,
        );
      });
    });
}
