import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { shortHash } from '../../domain/hash.js';
import { DEFAULT_USER, turnInputSchema } from '../../domain/turn.js';
import { ValidationError } from '../../errors.js';
import { UsageError, type GlobalOptions } from '../context.js';
import { withMemory, type CliServices } from '../../roots/maintenance.js';
import { progressBar } from '../progress.js';
import { count } from '../plural.js';
import { turnFormatHelp } from '../turn-format.js';

const BATCH = 500;

async function* jsonLines(file: string): AsyncGenerator<{ line: number; value: unknown }> {
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let line = 0;
  for await (const text of rl) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ValidationError(`${file}:${line}: not valid JSON (${(err as Error).message})`, [{ path: `line ${line}`, message: 'not valid JSON' }]);
    }
    yield { line, value };
  }
}

export function registerIngest(program: Command, globals: () => GlobalOptions): void {
  program
    .command('ingest')
    .description('import turns (one JSON turn per line) through the normal write path')
    .argument('<file>', 'a JSONL file of turns (the format is below)')
    .addHelpText('after', turnFormatHelp(turnInputSchema(32_000)))
    .option('--wait', 'return when every imported turn is processed')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, opts: { wait?: boolean; json?: boolean }) => {
      // a bulk import of past conversations is not a live chat: no compaction (and no LLM calls) per session
      await withMemory(globals(), { autoCompact: false }, async (memory, s) => {
        // first pass validates everything, so a bad line stores nothing of the file
        let total = 0;
        try {
          for await (const { line, value } of jsonLines(file)) {
            try {
              s.writePath.validate([value]);
            } catch (err) {
              if (err instanceof ValidationError) throw new ValidationError(`${file}:${line}: ${err.message}`, err.details ?? []);
              throw err;
            }
            total++;
          }
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${file}`);
          throw err;
        }
        const bar = progressBar('ingest', total);
        const ids: Array<{ user_id: string; id: string }> = [];
        let accepted = 0;
        let duplicates = 0;
        let batch: unknown[] = [];
        const withIds = importIds();
        const flush = async () => {
          if (batch.length === 0) return;
          const r = await s.writePath.addTurns(batch);
          // validated by addTurns: each turn names its user, or is the default user's
          r.ids.forEach((id, i) => ids.push({ user_id: ((batch[i] as { user_id?: string }).user_id ?? DEFAULT_USER), id }));
          accepted += r.accepted;
          duplicates += r.duplicates;
          batch = [];
          bar.update(ids.length);
        };
        for await (const { value } of jsonLines(file)) {
          batch.push(withIds(value));
          if (batch.length >= BATCH) await flush();
        }
        await flush();
        bar.stop();
        if (opts.wait) await waitForProcessing(s, ids);
        const summary = { file, turns: total, accepted, duplicates, waited: Boolean(opts.wait) };
        if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else process.stderr.write(`ingested ${count(total, 'turn')} from ${file}: ${accepted} new, ${duplicates} already stored\n`);
        void memory;
      });
    });
}

/** Waits until every imported turn's jobs have completed (the semantic part only when an embedder is loaded). */
async function waitForProcessing(s: Pick<CliServices, 'embedders' | 'queue' | 'turnLog'>, ids: ReadonlyArray<{ user_id: string; id: string }>): Promise<void> {
  const withEmbed = (await s.embedders.ready()) !== null;
  const bar = progressBar('processing', ids.length);
  for (;;) {
    if (s.queue.backend === 'in-process') await s.queue.idle();
    const left = await s.turnLog.unfinished(ids, withEmbed);
    bar.update(ids.length - left);
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  bar.stop();
}

/**
 * Turns without an `id` get one derived from what they say and where (user, session, role, time,
 * text, and how many identical turns came before in this file), so importing the same file twice
 * stores nothing twice while a repeated "ok" within one conversation is still kept.
 */
function importIds(): (value: unknown) => unknown {
  const seen = new Map<string, number>();
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || 'id' in value) return value;
    const v = value as Record<string, unknown>;
    const key = JSON.stringify([v.user_id ?? DEFAULT_USER, v.session_id, v.role, v.created_at ?? null, v.content]);
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return { ...v, id: `imp-${shortHash(`${key}#${n}`, 32)}` };
  };
}
