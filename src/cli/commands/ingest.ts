import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { nextArchival } from '../../archival/schedule.js';
import { shortHash } from '../../domain/hash.js';
import { DEFAULT_USER, turnInputSchema } from '../../domain/turn.js';
import { ValidationError, type ErrorDetail } from '../../errors.js';
import { UsageError, type GlobalOptions } from '../context.js';
import { withMemory, type CliServices } from '../../roots/maintenance.js';
import { jsonLines } from '../jsonl.js';
import { progressBar } from '../progress.js';
import { count } from '../plural.js';
import { turnFormatHelp } from '../turn-format.js';

const BATCH = 500;
/** bad lines listed one by one; past these, a count */
const REPORTED_BAD_LINES = 100;

interface IngestOptions {
  wait?: boolean;
  json?: boolean;
  skipInvalid?: boolean;
  rejected?: string;
}

interface BadLine {
  line: number;
  raw: Buffer;
  details: ErrorDetail[];
}

export function registerIngest(program: Command, globals: () => GlobalOptions): void {
  program
    .command('ingest')
    .description('import turns (one JSON turn per line) through the normal write path')
    .argument('<file>', 'a JSONL file of turns (the format is below)')
    .addHelpText('after', turnFormatHelp(turnInputSchema(32_000)))
    .option('--wait', 'return when every imported turn is processed')
    .option('--json', 'print the summary as JSON')
    .option('--skip-invalid', 'import the valid lines and write the invalid ones to the --rejected file (default: any invalid line imports nothing)')
    .option('--rejected <file>', 'with --skip-invalid: where the invalid lines go, as they were (default <file>.rejected.jsonl)')
    .action(async (file: string, opts: IngestOptions) => {
      if (opts.rejected && !opts.skipInvalid) throw new UsageError('--rejected goes with --skip-invalid');
      // a bulk import of past conversations is not a live chat: no compaction (and no LLM calls) per session
      await withMemory(globals(), { autoCompact: false }, async (_memory, s) => {
        // first pass: every line is checked, so that every bad line is reported and, by default, none stored
        const bad: BadLine[] = [];
        let total = 0;
        try {
          for await (const l of jsonLines(file)) {
            total++;
            if (l.problem) {
              bad.push({ line: l.line, raw: l.raw, details: [{ path: '(line)', message: l.problem }] });
              continue;
            }
            try {
              s.writePath.validate([l.value]);
            } catch (err) {
              if (!(err instanceof ValidationError)) throw err;
              bad.push({ line: l.line, raw: l.raw, details: err.details ?? [{ path: '(line)', message: err.message }] });
            }
          }
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${file}`);
          if ((err as NodeJS.ErrnoException).code === 'EISDIR') throw new UsageError(`${file} is a folder, not a file`);
          throw err;
        }
        if (bad.length > 0) {
          reportBadLines(file, bad);
          if (!opts.skipInvalid) {
            throw new ValidationError(
              `${file}: ${count(bad.length, 'invalid line')} of ${total}; nothing was imported (fix them, or --skip-invalid imports the ${total - bad.length} valid ones)`,
              bad.slice(0, REPORTED_BAD_LINES).flatMap((b) => b.details.map((d) => ({ path: `line ${b.line}: ${d.path}`, message: d.message }))),
            );
          }
        }
        const rejectedFile = opts.rejected ?? `${file}.rejected.jsonl`;
        if (bad.length > 0) {
          // the lines as they were, so they can be mended and ingested again; owner-only: they are conversations
          writeFileSync(rejectedFile, Buffer.concat(bad.flatMap((b) => [b.raw, Buffer.from('\n')])), { mode: 0o600 });
        }

        const skip = new Set(bad.map((b) => b.line));
        const good = total - bad.length;
        const bar = progressBar('ingest', good);
        const ids: Array<{ user_id: string; id: string }> = [];
        /** the newest turn of each imported session, to say which ones the next archival run will condense */
        const lastOfSession = new Map<string, number>();
        let accepted = 0;
        let duplicates = 0;
        let batch: unknown[] = [];
        const withIds = importIds();
        const flush = async () => {
          if (batch.length === 0) return;
          const r = await s.writePath.addTurns(batch);
          // validated by addTurns: each turn names its user, or is the default user's
          r.ids.forEach((id, i) => ids.push({ user_id: (batch[i] as { user_id?: string }).user_id ?? DEFAULT_USER, id }));
          accepted += r.accepted;
          duplicates += r.duplicates;
          batch = [];
          bar.update(ids.length);
        };
        for await (const l of jsonLines(file)) {
          if (skip.has(l.line)) continue;
          const turn = l.value as { user_id?: string; session_id: string; created_at?: string };
          const session = JSON.stringify([turn.user_id ?? DEFAULT_USER, turn.session_id]);
          const at = turn.created_at ? Date.parse(turn.created_at) : Date.now();
          lastOfSession.set(session, Math.max(lastOfSession.get(session) ?? at, at));
          batch.push(withIds(l.value));
          if (batch.length >= BATCH) await flush();
        }
        await flush();
        bar.stop();
        if (opts.wait) await waitForProcessing(s, ids);
        const old = oldSessions(s.config, lastOfSession);
        // the fields of what did not happen are left out: a clean import answers as it always has
        const summary = {
          file,
          turns: good,
          accepted,
          duplicates,
          ...(bad.length > 0 ? { invalid: bad.length, rejected_file: rejectedFile } : {}),
          waited: Boolean(opts.wait),
        };
        if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else {
          process.stderr.write(`ingested ${count(good, 'turn')} from ${file}: ${accepted} new, ${duplicates} already stored\n`);
          if (bad.length > 0) process.stderr.write(`skipped ${count(bad.length, 'invalid line')}: written, as they were, to ${rejectedFile}\n`);
        }
        // on stderr also with --json: a note for the person, not a field of the summary
        if (old > 0) process.stderr.write(archivalNote(s.config, old));
      });
    });
}

/** Every bad line on stderr, with its line number, field and reason: the first REPORTED_BAD_LINES, then a count. */
function reportBadLines(file: string, bad: readonly BadLine[]): void {
  const out = bad.slice(0, REPORTED_BAD_LINES).map((b) => `${file}:${b.line}: ${b.details.map((d) => (d.path === '(line)' ? d.message : `${d.path}: ${d.message}`)).join('; ')}\n`);
  if (bad.length > REPORTED_BAD_LINES) out.push(`… and ${count(bad.length - REPORTED_BAD_LINES, 'more invalid line')}\n`);
  process.stderr.write(out.join(''));
}

/** How many imported sessions ended before the archival cut-off: the next run condenses them. */
function oldSessions(config: CliServices['config'], lastOfSession: ReadonlyMap<string, number>): number {
  const cutoff = Date.now() - config.archival_inactive_days * 86_400_000;
  let n = 0;
  for (const last of lastOfSession.values()) if (last < cutoff) n++;
  return n;
}

function archivalNote(config: CliServices['config'], sessions: number): string {
  const next = nextArchival(config)?.toISOString() ?? 'never (archival_cron has no next run)';
  return (
    `note: ${count(sessions, 'imported session')} ended more than ${config.archival_inactive_days} days ago (archival_inactive_days): ` +
    `the next archival run (${next}) condenses each into one archive entry, and the turns it covers leave every tier. ` +
    'To keep them verbatim, pin what must stay ("pinned": true) or raise archival_inactive_days before then; ' +
    '`neuralcleave memory archive --dry-run` lists what that run would archive.\n'
  );
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
