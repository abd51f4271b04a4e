import type { Command } from 'commander';
import type { MemoryEntry } from '../../domain/entry.js';
import { DEFAULT_USER } from '../../domain/turn.js';
import { parseIntOption, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { count } from '../plural.js';

/** What an empty answer says: for whom it looked, and, when no --user was given, how to name one. */
function nothingFor(user: string | undefined): string {
  return user ? `no entries for user "${user}"\n` : `no entries for user "${DEFAULT_USER}" (no --user given; \`neuralcleave memory users\` lists the users with memories)\n`;
}

function printEntries(entries: MemoryEntry[], json: boolean | undefined, user: string | undefined): void {
  if (json) return printJson(entries);
  for (const e of entries) {
    const flags = [e.kind, `importance ${e.importance.toFixed(2)}`, e.pinned ? 'pinned' : ''].filter(Boolean).join(', ');
    process.stdout.write(`${e.id}  ${e.created_at}  ${e.session_id}  ${e.name ?? e.role}  (${flags})\n    ${e.content}\n`);
  }
  if (entries.length === 0) process.stderr.write(nothingFor(user));
}

/** `memory …`: the long-term routes' equivalents; returns the group so other modules add subcommands. */
export function registerMemory(program: Command, globals: () => GlobalOptions): Command {
  const memory = program.command('memory').description('inspect and maintain stored memories');

  memory
    .command('list')
    .description('most recent long-term entries')
    .option('--user <id>', `the user (default "${DEFAULT_USER}")`)
    .option('--session <id>', 'only this session')
    .option('--limit <n>', 'how many', parseIntOption('--limit', 1, 10_000), 20)
    .option('--json', 'print a JSON array')
    .action(async (o: { user?: string; session?: string; limit: number; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false, readOnly: true }, async (m) => {
        printEntries(await m.recent({ user_id: o.user ?? DEFAULT_USER, limit: o.limit, ...(o.session ? { session_id: o.session } : {}) }), o.json, o.user);
      });
    });

  memory
    .command('search')
    .description('long-term substring search (% and _ match literally)')
    .argument('<text>', 'the substring')
    .option('--user <id>', `the user (default "${DEFAULT_USER}")`)
    .option('--session <id>', 'only this session')
    .option('--limit <n>', 'how many', parseIntOption('--limit', 1, 10_000), 20)
    .option('--json', 'print a JSON array')
    .action(async (text: string, o: { user?: string; session?: string; limit: number; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false, readOnly: true }, async (m) => {
        printEntries(await m.search(text, { user_id: o.user ?? DEFAULT_USER, limit: o.limit, ...(o.session ? { session_id: o.session } : {}) }), o.json, o.user);
      });
    });

  memory
    .command('users')
    .description('the users with stored memories, most recently active first, with their counts')
    .option('--limit <n>', 'how many', parseIntOption('--limit', 1, 100_000), 100)
    .option('--json', 'print a JSON array')
    .action(async (o: { limit: number; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false, readOnly: true }, async (m) => {
        const users = await m.users({ all: true }, o.limit);
        if (o.json) return printJson(users);
        for (const u of users) {
          process.stdout.write(`${u.user_id}  ${count(u.sessions, 'session')}, ${count(u.turns, 'turn')}, ${count(u.entries, 'long-term entry')}, last ${u.last_at ?? 'never'}\n`);
        }
        if (users.length === 0) process.stderr.write('no users: nothing is stored\n');
      });
    });

  memory
    .command('sessions')
    .description("a user's sessions, most recently active first")
    .option('--user <id>', 'the user', DEFAULT_USER)
    .option('--limit <n>', 'how many', parseIntOption('--limit', 1, 100_000), 100)
    .option('--json', 'print a JSON array')
    .action(async (o: { user: string; limit: number; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false, readOnly: true }, async (m) => {
        const sessions = await m.sessions(o.user, o.limit);
        if (o.json) return printJson(sessions);
        for (const x of sessions) {
          process.stdout.write(`${x.session_id}  ${count(x.turns, 'turn')}, ${count(x.entries, 'long-term entry')}, ${x.first_at} → ${x.last_at}${x.live ? ', live' : ''}\n`);
        }
        if (sessions.length === 0) process.stderr.write(`no sessions stored for user "${o.user}"\n`);
      });
    });

  return memory;
}
