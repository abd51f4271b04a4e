import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { apiSchemas } from '../../api/schemas.js';
import type { MemoryEntry } from '../../domain/entry.js';
import { DEFAULT_USER, UserIdSchema } from '../../domain/turn.js';
import { NotFoundError } from '../../errors.js';
import { erasedNothing, type ErasureReport } from '../../memory/forget.js';
import { describeInstance } from '../../memory/process-instance.js';
import { parseOrThrow } from '../../validate.js';
import { CommandFailed, UsageError, configFrom, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { EXIT } from '../exit-codes.js';
import { count } from '../plural.js';

/**
 * Asks before destroying: `--yes` answers for scripts; on a terminal the user types "yes"; with no
 * terminal and no `--yes` the command refuses (exit 2) rather than guess.
 */
export async function confirmDestructive(what: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw new UsageError(`refusing to ${what} without --yes (no terminal to confirm on)`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`This will ${what}. It cannot be undone. Type "yes" to continue: `);
    if (answer.trim().toLowerCase() !== 'yes') throw new UsageError('cancelled: nothing was changed');
  } finally {
    rl.close();
  }
}

function num(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new UsageError(`${name} must be a number from ${min} to ${max}, got "${value}"`);
    return n;
  };
}

/** What an erasure removed, one line per tier, and whether the running processes applied it; errors last (the command then exits 1). */
export function describeErasure(r: ErasureReport): string {
  const scope = 'all' in r.scope ? 'all memories' : r.scope.session_id !== undefined ? `session "${r.scope.session_id}" of user "${r.scope.user_id}"` : `user "${r.scope.user_id}"`;
  const { confirmed, unconfirmed } = r.processes;
  const lines = [
    `erased ${scope}:`,
    `  long-term   ${count(r.long_term.turn ?? 0, 'turn')}, ${count(r.long_term.summary ?? 0, 'summary')}, ${count(r.long_term.archive ?? 0, 'archive')}`,
    `  turn log    ${count(r.turn_log, 'turn')}`,
    `  short-term  ${count(r.short_term, 'session')}`,
    `  semantic    ${count(r.vectors, 'vector')}`,
    `  queues      ${count(r.jobs, 'job')} holding the text`,
  ];
  for (const [table, n] of Object.entries(r.other_rows)) lines.push(`  ${table.padEnd(11)} ${count(n, 'row')}`);
  if (confirmed.length === 0 && unconfirmed.length === 0) lines.push('  processes   no running server shares this store with state of its own: nothing else to reach');
  if (confirmed.length > 0) lines.push(`  processes   applied by the running ${confirmed.length === 1 ? 'server' : 'servers'} (pid ${confirmed.map((i) => describeInstance(i)).join(', ')}) before this answer`);
  for (const e of r.errors) lines.push(`  NOT ERASED  ${e}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Prints an erasure's report. Nothing found is not a success (the user or session name may be
 * misspelt): exit 1 with a reason. Errors (a backend, a process that did not confirm): exit 1.
 */
function printErasure(r: ErasureReport, json: boolean | undefined, what: string): void {
  if (json) printJson(r);
  if (erasedNothing(r)) throw new CommandFailed(`nothing stored for ${what}: nothing was erased`);
  if (!json) process.stdout.write(describeErasure(r));
  if (r.errors.length > 0) {
    process.stderr.write(`neuralcleave: the erasure is incomplete (${count(r.errors.length, 'part')} failed); run it again once the backend is back\n`);
    process.exitCode = EXIT.failure;
  }
}

function printEntry(e: MemoryEntry, json: boolean | undefined): void {
  if (json) return printJson(e);
  process.stdout.write(`${e.id}  ${e.kind}  importance ${e.importance.toFixed(2)}${e.pinned ? '  pinned' : ''}  (${e.user_id}/${e.session_id})\n    ${e.content}\n`);
}

/** `memory edit/delete/prune/clear/forget`: the maintenance users run by hand (docs/architecture.md, maintenance). */
export function registerMaintenance(memory: Command, globals: () => GlobalOptions): void {
  const quiet = { reconcile: false } as const;

  memory
    .command('edit')
    .description('edit a long-term memory: its text (re-embedded), importance, or pinned flag')
    .argument('<id>', 'the memory id')
    .option('--user <id>', 'whose memory (ids are per user)', DEFAULT_USER)
    .option('--content <text>', 'the new text')
    .option('--importance <x>', 'the new importance, 0–1', num('--importance', 0, 1))
    .option('--pin', 'pin it: never pruned, archived or compacted away')
    .option('--unpin', 'unpin it')
    .option('--json', 'print the edited entry as JSON')
    .action(async (id: string, o: { user: string; content?: string; importance?: number; pin?: boolean; unpin?: boolean; json?: boolean }) => {
      if (o.pin && o.unpin) throw new UsageError('give --pin or --unpin, not both');
      const config = configFrom(globals());
      const s = apiSchemas(config);
      parseOrThrow(s.MemoryIdParams, { id }, 'memory id');
      const patch = parseOrThrow(
        s.PatchBody,
        {
          ...(o.content !== undefined ? { content: o.content } : {}),
          ...(o.importance !== undefined ? { importance: o.importance } : {}),
          ...(o.pin ? { pinned: true } : o.unpin ? { pinned: false } : {}),
        },
        'edit',
      );
      // workers run here: an edited text's embed job completes before the command exits (in-process queue)
      const user = parseOrThrow(UserIdSchema, o.user, '--user');
      await withMemory(globals(), quiet, async (m) => printEntry(await m.edit(user, id, patch), o.json));
    });

  memory
    .command('delete')
    .description('delete one memory from every tier that holds it')
    .argument('<id>', 'the memory id')
    .option('--user <id>', 'whose memory (ids are per user)', DEFAULT_USER)
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'print what was removed as JSON')
    .action(async (id: string, o: { user: string; yes?: boolean; json?: boolean }) => {
      const user = parseOrThrow(UserIdSchema, o.user, '--user');
      parseOrThrow(apiSchemas(configFrom(globals())).MemoryIdParams, { id }, 'memory id');
      await withMemory(globals(), { ...quiet, runWorkers: false }, async (m) => {
        const entry = await m.find(user, id);
        if (!entry) throw new NotFoundError(`memory ${id} of user "${user}"`);
        await confirmDestructive(`delete memory ${id} of user "${user}" ("${entry.content.slice(0, 60)}${entry.content.length > 60 ? '…' : ''}")`, o.yes);
        const r = await m.delete(user, id);
        if (o.json) return printJson(r);
        const tiers = Object.entries(r.removed).filter(([, v]) => v).map(([k]) => k);
        process.stdout.write(`deleted ${id} from ${tiers.length > 0 ? tiers.join(', ') : 'no tier (it was already gone)'}\n`);
      });
    });

  memory
    .command('prune')
    .description('delete unpinned memories by age, importance and/or session from every tier (turn log, short-term, vectors, long-term)')
    .option('--older-than-days <n>', 'created more than N days ago', num('--older-than-days', 0, 36_500))
    .option('--below-importance <x>', 'importance below X', num('--below-importance', 0, 1))
    .option('--session <id>', 'only this session')
    .option('--user <id>', 'the user whose memories are pruned (this or --all-users is required)')
    .option('--all-users', "prune every user's memories (a retention policy over the whole store)")
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'print {deleted, ids} as JSON (with --all-users also memories: [{user_id, id}])')
    .action(async (o: { olderThanDays?: number; belowImportance?: number; session?: string; user?: string; allUsers?: boolean; yes?: boolean; json?: boolean }) => {
      // every user is never the silent default of a destructive command: it is named, like POST /memory/prune's user_id
      if (o.user !== undefined && o.allUsers) throw new UsageError('give --user or --all-users, not both');
      if (o.user === undefined && !o.allUsers) throw new UsageError("prune acts on one user: give --user U, or --all-users to prune every user's memories");
      const body = parseOrThrow(
        apiSchemas(configFrom(globals())).PruneBody,
        {
          ...(o.user !== undefined ? { user_id: o.user } : {}),
          ...(o.session !== undefined ? { session_id: o.session } : {}),
          ...(o.olderThanDays !== undefined ? { older_than_days: o.olderThanDays } : {}),
          ...(o.belowImportance !== undefined ? { below_importance: o.belowImportance } : {}),
        },
        'prune criteria (give --older-than-days, --below-importance or --session)',
      );
      const criteria = [
        body.older_than_days !== undefined ? `older than ${body.older_than_days} days` : '',
        body.below_importance !== undefined ? `with importance below ${body.below_importance}` : '',
        body.session_id !== undefined ? `of session "${body.session_id}"` : '',
      ].filter(Boolean);
      await confirmDestructive(`delete the unpinned long-term memories ${criteria.join(', ')} of ${body.user_id !== undefined ? `user "${body.user_id}"` : 'every user'}`, o.yes);
      await withMemory(globals(), { ...quiet, runWorkers: false }, async (m) => {
        const refs = await m.prune({
          ...(body.user_id !== undefined ? { userId: body.user_id } : {}),
          ...(body.session_id !== undefined ? { sessionId: body.session_id } : {}),
          ...(body.older_than_days !== undefined ? { olderThanDays: body.older_than_days } : {}),
          ...(body.below_importance !== undefined ? { belowImportance: body.below_importance } : {}),
        });
        const ids = refs.map((r) => r.id);
        // across users an id alone is ambiguous: each pruned memory is named with its user too
        if (o.json) return printJson({ deleted: refs.length, ids, ...(body.user_id === undefined ? { memories: refs.map((r) => ({ user_id: r.user_id, id: r.id })) } : {}) });
        process.stdout.write(`pruned ${count(refs.length, 'memory')} from every tier\n`);
        for (const r of refs) process.stdout.write(`  ${body.user_id !== undefined ? r.id : `${r.user_id}/${r.id}`}\n`);
      });
    });

  memory
    .command('clear')
    .description('erase one session (--session S) or everything (--all --yes) from every tier, pinned memories included')
    .option('--session <id>', 'the session to erase')
    .option('--user <id>', 'the user of --session', DEFAULT_USER)
    .option('--all', 'erase every memory of every user')
    .option('--yes', 'do not ask for confirmation')
    .option('--vacuum', 'rebuild the SQLite file afterwards (for files written by builds without secure delete)')
    .option('--json', 'print what was removed as JSON')
    .action(async (o: { session?: string; user: string; all?: boolean; yes?: boolean; vacuum?: boolean; json?: boolean }) => {
      if (o.all && o.session !== undefined) throw new UsageError('give --session S or --all, not both');
      if (!o.all && o.session === undefined) throw new UsageError('give --session S (one session) or --all (everything)');
      if (o.all) await confirmDestructive('erase ALL memories of EVERY user from every tier', o.yes);
      else await confirmDestructive(`erase session "${o.session}" of user "${o.user}" from every tier, pinned memories included`, o.yes);
      await withMemory(globals(), { ...quiet, runWorkers: false }, async (m) => {
        const options = { vacuum: Boolean(o.vacuum) };
        if (o.all) printErasure(await m.clearAll(options), o.json, 'any user');
        else printErasure(await m.clearSession(o.user, o.session!, options), o.json, `session "${o.session}" of user "${o.user}"`);
      });
    });

  memory
    .command('forget')
    .description("erase everything held about a user: entries, summaries, archives, vectors, short-term, turn log, queued and failed jobs")
    .requiredOption('--user <id>', 'the user to forget')
    .option('--yes', 'do not ask for confirmation')
    .option('--vacuum', 'rebuild the SQLite file afterwards (for files written by builds without secure delete)')
    .option('--json', 'print what was removed as JSON')
    .action(async (o: { user: string; yes?: boolean; vacuum?: boolean; json?: boolean }) => {
      await confirmDestructive(`erase everything held about user "${o.user}"`, o.yes);
      await withMemory(globals(), { ...quiet, runWorkers: false }, async (m) => printErasure(await m.forget(o.user, { vacuum: Boolean(o.vacuum) }), o.json, `user "${o.user}"`));
    });
}
