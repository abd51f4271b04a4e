import type { Command } from 'commander';
import type { CompactionResult } from '../../compaction/compactor.js';
import { DEFAULT_USER } from '../../domain/turn.js';
import { CommandFailed, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { count } from '../plural.js';

/** One human paragraph about a compaction; the chat prompt's /compact prints the same. */
export function describeCompaction(r: CompactionResult): string {
  if (r.status !== 'compacted') {
    const why = {
      below_threshold: 'it is under the compaction threshold',
      nothing_to_compact: 'only pinned, recent or already summarized turns are left',
      session_gone: 'the session was erased meanwhile',
    }[r.status];
    return `nothing to compact in session ${r.session_id}: ${why} (${r.tokens_before} tokens)\n`;
  }
  return (
    `compacted session ${r.session_id}: ${count(r.summarized, 'turn')} summarized by ${r.summarizer ?? 'an earlier run'} into ${r.summary_id}; ` +
    `${count(r.kept, 'turn')} kept verbatim; ${r.tokens_before} → ${r.tokens_after} tokens\n\n${r.summary}\n`
  );
}

/** `memory compact --session S [--user U]`: the by-hand compaction of docs/architecture.md, compaction and archival. */
export function registerMemoryCompact(memory: Command, globals: () => GlobalOptions): void {
  memory
    .command('compact')
    .description("summarize a session now: the summary replaces its short-term history and is kept in long-term memory")
    .requiredOption('--session <id>', 'the session')
    .option('--user <id>', 'the user', DEFAULT_USER)
    .option('--json', 'print the result as JSON')
    .action(async (o: { session: string; user: string; json?: boolean }) => {
      // workers run in-process (the summary's embed job completes before exit); no reconcile pass
      await withMemory(globals(), { reconcile: false }, async (m, s) => {
        // a misspelt session is not "nothing to compact": say it does not exist (exit 1)
        const known = (await s.turnLog.session(o.user, o.session)).length > 0 || (await s.shortTerm.recent(o.user, o.session, 1)).length > 0;
        if (!known) throw new CommandFailed(`no session "${o.session}" of user "${o.user}" is stored: nothing to compact`);
        const result = await m.compact(o.user, o.session);
        if (o.json) printJson(result);
        else process.stdout.write(describeCompaction(result));
      });
    });
}
