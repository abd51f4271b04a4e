import type { Command } from 'commander';
import { ValidationError } from '../../errors.js';
import { replacingIds, status, whenMentioned } from '../../retrieval/prompt-blocks.js';
import type { RetrieveResponse } from '../../retrieval/retrieve.js';
import { UsageError, parseIntOption, printJson, type GlobalOptions } from '../context.js';
import { jsonLines } from '../jsonl.js';
import { withMemory } from '../../roots/maintenance.js';

interface RetrieveOptions {
  user?: string;
  session?: string;
  topK?: number;
  minScore?: number;
  json?: boolean;
  batch?: string;
  filters?: string;
  meta: string[];
  sessionIds?: string;
  roles?: string;
  kinds?: string;
  createdAfter?: string;
  createdBefore?: string;
}

const list = (v: string | undefined) => (v === undefined ? undefined : v.split(',').map((x) => x.trim()).filter(Boolean));

/**
 * The `filters` of a retrieve from the command line: `--filters JSON` (the HTTP body's object) and
 * the flags, which add to it (a flag wins over the same field in the JSON). Validated by the same
 * schema as every other door.
 */
export function filtersFrom(o: RetrieveOptions): Record<string, unknown> | undefined {
  let base: Record<string, unknown> = {};
  if (o.filters !== undefined) {
    try {
      base = JSON.parse(o.filters) as Record<string, unknown>;
    } catch {
      throw new UsageError(`--filters must be a JSON object, e.g. '{"metadata":{"topic":"travel"}}', got ${o.filters}`);
    }
    if (base === null || typeof base !== 'object' || Array.isArray(base)) throw new UsageError('--filters must be a JSON object');
  }
  const metadata: Record<string, unknown> = { ...((base.metadata as Record<string, unknown> | undefined) ?? {}) };
  for (const kv of o.meta) {
    const at = kv.indexOf('=');
    if (at <= 0) throw new UsageError(`--meta takes key=value, got "${kv}"`);
    metadata[kv.slice(0, at)] = kv.slice(at + 1);
  }
  const out: Record<string, unknown> = {
    ...base,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(o.sessionIds !== undefined ? { session_ids: list(o.sessionIds) } : {}),
    ...(o.roles !== undefined ? { roles: list(o.roles) } : {}),
    ...(o.kinds !== undefined ? { kinds: list(o.kinds) } : {}),
    ...(o.createdAfter !== undefined ? { created_after: o.createdAfter } : {}),
    ...(o.createdBefore !== undefined ? { created_before: o.createdBefore } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

function printHuman(r: RetrieveResponse): void {
  const replacing = replacingIds(r.results);
  for (const [i, x] of r.results.entries()) {
    process.stdout.write(`${i + 1}. [${x.tier} ${x.score.toFixed(3)}] ${x.name ?? x.role} (${x.created_at.slice(0, 10)}${status(x, replacing)}${whenMentioned(x)}, ${x.session_id}): ${x.content}\n`);
  }
  if (r.results.length === 0) process.stdout.write('no memories found\n');
  const skipped = Object.entries(r.tiers).filter(([, t]) => t.status !== 'ok');
  for (const [tier, t] of skipped) process.stderr.write(`note: ${tier} tier ${t.status}${t.error ? `: ${t.error}` : ''}\n`);
}

function parseScore(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new UsageError(`--min-score takes a number from 0 to 1, got "${v}"`);
  return n;
}

export function registerRetrieve(program: Command, globals: () => GlobalOptions): void {
  program
    .command('retrieve')
    .description('run the retrieval pass for a query (or a batch of queries)')
    .argument('[query]', 'the query text')
    .option('--user <id>', 'the user whose memories to read')
    .option('--session <id>', 'the current session (its short-term turns get priority)')
    .option('--top-k <k>', 'how many results', parseIntOption('--top-k', 1, 100))
    .option('--min-score <s>', 'drop results scoring below it (0 to 1; see the README for the scale)', parseScore)
    .option('--json', 'print {results, prompt_blocks} as JSON')
    .option('--batch <file>', 'read {query, user_id?, session_id?, top_k?, filters?} lines; write one JSON result line per query')
    .option('--filters <json>', 'only memories matching these filters (the HTTP "filters" object)')
    .option('--meta <key=value>', 'only memories whose metadata key has this (string) value; repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--session-ids <a,b>', 'only memories of these sessions')
    .option('--roles <r,…>', 'only these roles (user, assistant, system, tool)')
    .option('--kinds <k,…>', 'only these kinds (turn, summary, archive)')
    .option('--created-after <iso>', 'only memories created at or after this time')
    .option('--created-before <iso>', 'only memories created before this time')
    .action(async (query: string | undefined, opts: RetrieveOptions) => {
      if (opts.batch && query) throw new UsageError('give either a query or --batch, not both');
      const filters = filtersFrom(opts);
      if (opts.batch && filters) throw new UsageError('with --batch, give filters on each line ("filters": {...}), not as flags');
      if (!opts.batch && !query) throw new UsageError('a query is required (or --batch FILE)');
      if (!opts.batch && !opts.user) throw new UsageError('--user is required');
      await withMemory(globals(), { reconcile: false, readOnly: true }, async (memory, s) => {
        // a one-shot run waits for the model, or its semantic tier would always be skipped
        await s.embedders.ready();
        if (!opts.batch) {
          const r = await memory.retrieve({ query: query!, user_id: opts.user!, ...(opts.session ? { session_id: opts.session } : {}), ...(opts.topK ? { top_k: opts.topK } : {}), ...(opts.minScore !== undefined ? { min_score: opts.minScore } : {}), ...(filters ? { filters } : {}) });
          if (opts.json) printJson({ results: r.results, prompt_blocks: r.prompt_blocks, tiers: r.tiers });
          else printHuman(r);
          return;
        }
        for await (const { line, value: request, problem } of jsonLines(opts.batch)) {
          if (problem) throw new ValidationError(`${opts.batch}:${line}: ${problem}`, [{ path: `line ${line}`, message: problem }]);
          try {
            const r = await memory.retrieve(request as Parameters<typeof memory.retrieve>[0]);
            printJson({ results: r.results, prompt_blocks: r.prompt_blocks, tiers: r.tiers });
          } catch (err) {
            if (err instanceof ValidationError) throw new ValidationError(`${opts.batch}:${line}: ${err.message}`, err.details ?? []);
            throw err;
          }
        }
      });
    });
}
