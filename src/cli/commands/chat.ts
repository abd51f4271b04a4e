import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { ChatPreview } from '../../chat/pipeline.js';
import type { RetrievalResult } from '../../domain/entry.js';
import { DEFAULT_USER } from '../../domain/turn.js';
import { clearSession } from '../../memory/forget.js';
import { oneLine, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { describeCompaction } from './compact.js';
import { count } from '../plural.js';

const HELP = `commands:
  /why             which memories the last message retrieved, and why each was (also after an LLM error)
  /compact         summarize this session now
  /forget-session  erase this session from every tier
  /exit            leave (so does end of input)
`;

function fixed(x: number | null): string {
  return x === null ? '–' : x.toFixed(3);
}

/** One memory with the parts of its score (`explain`). */
export function describeMemory(r: RetrievalResult, i: number): string {
  const e = r.explain;
  const ranks = Object.entries(e.ranks).map(([tier, rank]) => `${tier}#${rank}`).join(' ');
  const who = r.name ? `${r.role} ${r.name}` : r.role;
  return (
    `${i + 1}. [${r.tier} ${r.score.toFixed(3)}] ${who}${r.kind === 'turn' ? '' : ` (${r.kind})`}, ${r.created_at.slice(0, 10)}: ${r.content.replace(/\s*\n\s*/g, ' ')}\n` +
    `   similarity ${fixed(e.similarity)}, bm25 ${fixed(e.bm25)}, ranks ${ranks || '–'}, fusion ${e.fusion.toFixed(4)}, ` +
    `tier priority ${e.tier_priority.toFixed(2)}, recency ${e.recency.toFixed(2)}, importance ${e.importance.toFixed(2)}\n`
  );
}

/**
 * `chat --session S [--user U] [--no-llm]`: an interactive prompt over the chat pipeline. Reads lines
 * from a terminal (with a prompt) or from piped stdin (one message per line, no prompt); replies go to
 * stdout as `assistant> …`, notices and errors to stderr. With piped input a failed message makes the
 * exit code 1; at a terminal the prompt just goes on.
 *
 * Retrieval only (`--no-llm`, and whenever no LLM is configured): each message shows the memories and
 * the prompt text an LLM would be given, and nothing is written — a way to see what memory holds and
 * what it would inject before any LLM is set up.
 */
export function registerChat(program: Command, globals: () => GlobalOptions): void {
  program
    .command('chat')
    .description('interactive chat with memory (/why, /compact, /forget-session, /exit); --no-llm shows what would be injected')
    .requiredOption('--session <id>', 'the session')
    .option('--user <id>', 'the user', DEFAULT_USER)
    .option('--no-llm', 'retrieval only: show the memories and prompt text each message would give an LLM; nothing is written')
    .action(async (o: { session: string; user: string; llm: boolean }) => {
      await withMemory(globals(), {}, async (memory, s) => {
        const interactive = process.stdin.isTTY === true;
        const say = (text: string) => process.stdout.write(text);
        const note = (text: string) => process.stderr.write(text);
        const retrievalOnly = !o.llm || !s.chat.available;
        if (o.llm && !s.chat.available) note(`no LLM is configured (${s.llm.describe().summary}): retrieval only — each message shows what would be injected; nothing is written\n`);
        await s.embedders.ready();
        const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive, prompt: 'you> ' });
        rl.on('SIGINT', () => rl.close());
        if (interactive) note(`chat — session ${o.session}, user ${o.user}; ${retrievalOnly ? 'retrieval only, no LLM' : `llm: ${s.llm.describe().summary}`}\n${HELP}`);

        let last: ChatPreview | null = null;
        let failures = 0;
        if (interactive) rl.prompt();
        for await (const line of rl) {
          const text = line.trim();
          try {
            if (text === '') {
              // nothing to send
            } else if (text === '/exit' || text === '/quit') {
              break;
            } else if (text === '/help') {
              say(HELP);
            } else if (text === '/why') {
              if (!last) say('no message yet\n');
              else if (last.memories.length === 0) say('the last message retrieved no memories\n');
              else say(`memories retrieved for the last message (${last.memories.length}):\n${last.memories.map(describeMemory).join('')}`);
            } else if (text === '/compact') {
              say(describeCompaction(await memory.compact(o.user, o.session)));
            } else if (text === '/forget-session') {
              const r = await clearSession(s, o.user, o.session);
              last = null;
              say(
                `forgot session ${o.session}: ${count(r.turn_log, 'turn')}, ${count((r.long_term.turn ?? 0) + (r.long_term.summary ?? 0) + (r.long_term.archive ?? 0), 'long-term entry')}, ` +
                  `${count(r.vectors, 'vector')}${r.errors.length > 0 ? `; not erased: ${r.errors.join('; ')}` : ''}\n`,
              );
            } else if (text.startsWith('/')) {
              say(`unknown command ${text.split(/\s/)[0]}\n${HELP}`);
            } else if (retrievalOnly) {
              last = await s.chat.preview({ session_id: o.session, user_id: o.user, message: line });
              say(last.memories.length === 0 ? 'memory> nothing to inject\n' : `memory> would inject ${count(last.memories.length, 'memory')}:\n${last.prompt_blocks}\n`);
            } else {
              last = null;
              const r = await s.chat.chat({ session_id: o.session, user_id: o.user, message: line }, { onRetrieved: (p) => (last = p) });
              say(`assistant> ${r.reply}\n`);
            }
          } catch (err) {
            failures++;
            note(`error: ${oneLine(err)}\n`);
          }
          if (interactive) rl.prompt();
        }
        rl.close();
        // a terminal's stdin stays referenced after readline lets it go: release it, or the process never exits
        process.stdin.destroy();
        if (interactive) say('\n');
        if (!interactive && failures > 0) process.exitCode = 1;
      });
    });
}
