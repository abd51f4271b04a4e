import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { ChatResponse } from '../../chat/pipeline.js';
import type { RetrievalResult } from '../../domain/entry.js';
import { DEFAULT_USER } from '../../domain/turn.js';
import { clearSession } from '../../memory/forget.js';
import { UsageError, oneLine, withMemory, type GlobalOptions } from '../context.js';
import { describeCompaction } from './compact.js';

const HELP = `commands:
  /why             which memories the last reply drew on, and why each was retrieved
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
 * `chat --session S [--user U]`: an interactive prompt over the chat pipeline. Reads lines from a
 * terminal (with a prompt) or from piped stdin (one message per line, no prompt); replies go to stdout
 * as `assistant> …`, notices and errors to stderr. With piped input a failed message makes the exit
 * code 1; at a terminal the prompt just goes on.
 */
export function registerChat(program: Command, globals: () => GlobalOptions): void {
  program
    .command('chat')
    .description('interactive chat with memory (/why, /compact, /forget-session, /exit)')
    .requiredOption('--session <id>', 'the session')
    .option('--user <id>', 'the user', DEFAULT_USER)
    .action(async (o: { session: string; user: string }) => {
      await withMemory(globals(), {}, async (memory, s) => {
        if (!s.chat.available) throw new UsageError(`no LLM is configured (llm: ${s.llm.describe().summary})`);
        const interactive = process.stdin.isTTY === true;
        const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive, prompt: 'you> ' });
        rl.on('SIGINT', () => rl.close());
        const say = (text: string) => process.stdout.write(text);
        const note = (text: string) => process.stderr.write(text);
        if (interactive) note(`chat — session ${o.session}, user ${o.user}; llm: ${s.llm.describe().summary}\n${HELP}`);

        let last: ChatResponse | null = null;
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
              if (!last) say('no reply yet\n');
              else if (last.memories.length === 0) say('the last reply drew on no memories\n');
              else say(`memories retrieved for the last reply (${last.memories.length}):\n${last.memories.map(describeMemory).join('')}`);
            } else if (text === '/compact') {
              say(describeCompaction(await memory.compact(o.user, o.session)));
            } else if (text === '/forget-session') {
              const r = await clearSession(s, o.user, o.session);
              last = null;
              say(
                `forgot session ${o.session}: ${r.turn_log} turn(s), ${r.long_term.turn + r.long_term.summary + r.long_term.archive} long-term entr(ies), ` +
                  `${r.vectors} vector(s)${r.errors.length > 0 ? `; not erased: ${r.errors.join('; ')}` : ''}\n`,
              );
            } else if (text.startsWith('/')) {
              say(`unknown command ${text.split(/\s/)[0]}\n${HELP}`);
            } else {
              last = await s.chat.chat({ session_id: o.session, user_id: o.user, message: line });
              say(`assistant> ${last.reply}\n`);
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
