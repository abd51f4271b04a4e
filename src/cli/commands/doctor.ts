import type { Command } from 'commander';
import { CommandFailed, configFrom, printJson, type GlobalOptions } from '../context.js';
import { describeConfigSource, findConfigFile } from '../../config/load.js';
import { embeddingSetup, loadEmbedder } from '../../embedding/load.js';
import { withMemory } from '../../roots/maintenance.js';
import { missingStore } from '../../roots/where.js';
import { checkIntegrity, type Finding, type IntegrityReport } from '../../memory/integrity.js';
import { healthReport } from '../../health.js';
import { nextArchival } from '../../archival/schedule.js';
import { count } from '../plural.js';
import { EXIT } from '../exit-codes.js';

export function registerDoctor(program: Command, globals: () => GlobalOptions): void {
  program
    .command('doctor')
    .description("each tier's backend, the embedder, the queues, the turn log, and the integrity of what is stored")
    .option('--repair', 'remove entries, vectors and short-term copies of deleted memories, realign stale copies, re-enqueue unfinished jobs')
    .option('--json', 'print the report as JSON')
    .option('--embed <text>', 'only embed this text with the configured provider and print the width, the time and the first values')
    .action(async (o: { json?: boolean; repair?: boolean; embed?: string }) => {
      if (o.embed !== undefined) return embedOnce(globals(), o.embed, o.json === true);
      // opening a SQLite file that is not there would create an empty one, wherever the command ran
      const missing = missingStore(configFrom(globals()));
      if (missing) return noDatabase(globals(), missing, o.json === true);
      // without Redis the re-enqueued jobs run here (the in-process queue); with Redis the workers run them
      const runWorkers = o.repair === true && configFrom(globals()).redis_url === undefined;
      await withMemory(globals(), { reconcile: false, runWorkers }, async (_m, s) => {
        await s.embedders.ready();
        const integrity = await checkIntegrity(s, { repair: o.repair === true });
        const report = await healthReport(s);
        // the LLM is not a tier: shown here, probed briefly, and never a reason for /health to degrade
        const llm = { ...s.llm.describe(), reachable: s.llm.provider ? await s.llm.provider.ping(2000) : null };
        const store = await s.store.maintenance.describe();
        const pg = s.store.kind === 'postgres';
        const archival = {
          cron: s.config.archival_cron,
          timezone: s.config.archival_timezone,
          inactive_days: s.config.archival_inactive_days,
          next_run: nextArchival(s.config)?.toISOString() ?? null,
          // BullMQ: workers consuming `archive` register the scheduler; in-process: `serve` runs it
          scheduled_by: s.queue.backend === 'bullmq' ? 'the BullMQ job scheduler (registered by every worker consuming archive)' : 'the serve process (in-process cron)',
          ...(await s.archiver.status()),
        };
        // one verdict, the one /health gives: anything but ok is a failed check (exit 1), with the way out;
        // so is stored data that must not exist (left by a delete racing a job in older builds)
        if (!store.writable || report.status !== 'ok' || integrity.problems > 0) process.exitCode = EXIT.failure;
        // the store's description under the name of what it is: `sqlite` (the file) or `database` (PostgreSQL)
        const source = findConfigFile(globals().config ? { file: globals().config } : {});
        if (o.json) return printJson({ ...report, config_file: source.file, llm, [pg ? 'database' : 'sqlite']: store, archival, integrity });
        const what = pg ? 'the PostgreSQL database' : 'the SQLite file';
        // the first line is the verdict the exit code gives: never "ok" above a PROBLEM line
        const verdict = report.status !== 'ok' ? report.status : !store.writable || integrity.problems > 0 ? 'problem' : 'ok';
        const why = [...(store.writable ? [] : [`${what} is not writable by this process`]), ...(integrity.problems > 0 ? [`${count(integrity.problems, 'integrity problem')} (below)`] : [])];
        const out: string[] = [`status      ${verdict}${why.length > 0 ? `${verdict === 'problem' ? ':' : ';'} ${why.join('; ')}` : ''}`];
        for (const p of report.problems) out.push(`  ${p.part} ${p.state}: ${p.advice}`);
        out.push(`config      ${describeConfigSource(source)}`);
        for (const [part, b] of Object.entries(report.backends)) out.push(`${part.padEnd(11)} ${b.backend} (${b.state})${b.detail ? ` — ${b.detail}` : ''}`);
        out.push(`embedding   ${embeddingSetup(s.config).summary}`);
        out.push(`llm         ${llm.summary}${llm.reachable === null ? '' : llm.reachable ? ' (reachable)' : ' (not reachable)'}`);
        const mb = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
        const writable = store.writable ? 'writable by this process' : `NOT WRITABLE by this process: ${store.problem}`;
        out.push(
          pg
            ? `database    ${store.path} — ${mb(store.bytes)}, schema v${store.schema_version}/${store.latest_version}, ${writable}`
            : `sqlite      ${store.path} — ${mb(store.bytes)} (+ ${mb(store.wal_bytes)} WAL), ${store.journal_mode}, schema v${store.schema_version}/${store.latest_version}, ${writable}`,
        );
        const kinds = Object.entries(store.rows.entries).map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
        out.push(`stored      ${store.rows.turns} logged turns; long-term entries: ${kinds}; ${store.rows.vectors} embedded-index vectors`);
        const last = archival.last_run;
        out.push(
          `archival    "${archival.cron}" (${archival.timezone}), sessions inactive ${archival.inactive_days} days; next ${archival.next_run ?? 'never'}; by ${archival.scheduled_by}; ` +
            `last run ${last ? `${last.started_at} ${last.outcome}${last.dry_run ? ' (dry run)' : ''}: ${count(last.sessions, 'session')}, ${count(last.replaced, 'memory')} replaced` : 'never'}` +
            `${archival.vector_deletes_pending > 0 ? `; ${count(archival.vector_deletes_pending, 'vector delete')} pending (the vector backend failed; retried next run)` : ''}`,
        );
        out.push(`turn log    ${report.turn_log.total} turns; pending embed ${report.turn_log.pending_embed}, persist ${report.turn_log.pending_persist}`);
        for (const [q, c] of Object.entries(report.queues)) if (c) out.push(`queue ${q.padEnd(8)} waiting ${c.waiting}, active ${c.active}, delayed ${c.delayed}, failed ${c.failed}`);
        out.push(...integrityLines(integrity));
        process.stdout.write(`${out.join('\n')}\n`);
      });
    });
}

/**
 * doctor where no SQLite file exists yet: a read-only command creates no database (issue 27), so it
 * says where it looked and which configuration sent it there, and exits 1 like the other read-only
 * commands. The embedder is not loaded here (a download is no check); `--embed` checks it alone.
 */
function noDatabase(globals: GlobalOptions, path: string, json: boolean): void {
  process.exitCode = EXIT.failure;
  const source = findConfigFile(globals.config ? { file: globals.config } : {});
  const advice = 'any command that writes (`serve`, `ingest`, `import`) creates it; `doctor --embed TEXT` checks the embedder without it';
  if (json) return printJson({ status: 'no_database', config_file: source.file, sqlite: { path, exists: false }, advice });
  process.stdout.write(
    [
      `status      no database: nothing is stored at ${path} yet, and doctor does not create it`,
      `config      ${describeConfigSource(source)}`,
      `sqlite      ${path} — does not exist; ${advice}`,
      `embedding   ${embeddingSetup(configFrom(globals)).summary}`,
    ].join('\n') + '\n',
  );
}

/**
 * `doctor --embed TEXT`: the configured embedder loaded on its own (no store opened) and one text
 * embedded as a stored text, with the load and embed times: the quickest check of a setup. A
 * failure is the embedder's own message (exit 1; a configuration it refuses, exit 2).
 */
async function embedOnce(globals: GlobalOptions, text: string, json: boolean): Promise<void> {
  const config = configFrom(globals);
  const setup = embeddingSetup(config);
  const started = performance.now();
  let embedder;
  try {
    embedder = await loadEmbedder(config);
  } catch (err) {
    throw new CommandFailed(`${setup.summary}: ${(err as Error).message}`);
  }
  try {
    const loadMs = performance.now() - started;
    const at = performance.now();
    const [v] = await embedder.embed([text]).catch((err: unknown) => {
      throw new CommandFailed(`${setup.summary}: ${(err as Error).message}`);
    });
    const embedMs = performance.now() - at;
    const first = Array.from(v!.subarray(0, 8), (x) => Number(x.toFixed(6)));
    let norm = 0;
    for (const x of v!) norm += x * x;
    const report = { provider: setup.provider, model: setup.model, id: embedder.id, width: embedder.dim, load_ms: Math.round(loadMs), embed_ms: Number(embedMs.toFixed(1)), norm: Number(Math.sqrt(norm).toFixed(4)), first_values: first };
    if (json) return printJson(report);
    process.stdout.write(
      [
        `embedding   ${setup.summary}`,
        `id          ${report.id}`,
        `width       ${report.width}`,
        `time        ${report.embed_ms} ms (load ${report.load_ms} ms)`,
        `norm        ${report.norm}`,
        `first       ${first.join(', ')}`,
      ].join('\n') + '\n',
    );
  } finally {
    await embedder.close();
  }
}

function integrityLines(r: IntegrityReport): string[] {
  const named = (f: Finding) => (f.sample.length > 0 ? ` (${f.sample.map((x) => `${x.user_id}/${x.id}`).join(', ')}${f.count > f.sample.length ? ', …' : ''})` : '');
  const out: string[] = [];
  const checks: Array<[string, Finding]> = [
    ['long-term entries of deleted turns', r.orphan_entries],
    [r.vectors_checked ? 'vectors of deleted memories' : 'vectors of deleted memories (Qdrant: not listed, not checked)', r.orphan_vectors],
    [r.short_term_shared ? 'short-term copies of deleted turns' : "short-term copies of deleted turns (this command's own in-process tier only)", r.orphan_short_term],
    ['copies whose text differs from their memory', r.stale],
    [`turns whose jobs have not finished after ${r.unfinished_after_s} s`, r.unfinished],
  ];
  for (const [what, f] of checks) out.push(`integrity   ${f.count === 0 ? 'ok' : 'PROBLEM'}: ${f.count} ${what}${named(f)}`);
  if (!r.short_term_shared) {
    out.push(
      'integrity   note: without redis_url the short-term tier lives in the memory of each process: a running `serve` holds its own, ' +
        'which this command cannot read. That copy checks every write against the turn log, and delete, edit, prune, clear and forget run here reach it (the erasure signals it confirms)',
    );
  }
  if (r.duplicate_content.groups > 0) {
    out.push(
      `integrity   note: ${r.duplicate_content.groups} text(s) stored under several ids of one user (kept: each id is its own memory; ` +
        'delete the ones you do not want with `neuralcleave memory delete <id> --user <user>`)',
    );
  }
  if (r.repaired) out.push(`integrity   repaired: ${r.repaired.removed} removed, ${r.repaired.realigned} realigned, ${r.repaired.requeued} unfinished re-enqueued`);
  else if (r.problems > 0) out.push('integrity   run `neuralcleave doctor --repair` to remove what was deleted, realign stale copies and re-enqueue unfinished jobs');
  return out;
}
