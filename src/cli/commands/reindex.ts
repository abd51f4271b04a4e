import type { Command } from 'commander';
import { reindex } from '../../memory/reindex.js';
import { parseIntOption, printJson, type GlobalOptions } from '../context.js';
import { withMemory } from '../../roots/maintenance.js';
import { progressBar } from '../progress.js';

/**
 * `memory reindex`: re-embeds every memory for the configured embedder (docs/architecture.md, embeddings). Safe to run beside
 * a live service and to interrupt: a second run goes on where the first stopped.
 */
export function registerReindex(memory: Command, globals: () => GlobalOptions): void {
  memory
    .command('reindex')
    .description('re-embed every turn, summary and archive for the configured embedding model (resumable)')
    .option('--batch-size <n>', 'texts per model call', parseIntOption('--batch-size', 1, 4096), 64)
    .option('--force', 're-embed even what already has a vector of this model')
    .option('--prune-old', "then delete every other model's vectors")
    .option('--json', 'print the report as JSON')
    .action(async (o: { batchSize: number; force?: boolean; pruneOld?: boolean; json?: boolean }) => {
      await withMemory(globals(), { reconcile: false, runWorkers: false }, async (_m, s) => {
        const embedder = await s.embedders.ready();
        if (!embedder) throw new Error(`cannot reindex: ${s.embedders.error ?? `embedding model "${s.config.embedding_model}" is not loaded`}`);
        const bar = progressBar(`reindex ${embedder.id}`, (await s.turnLog.counts()).total + (await s.longTerm.count()));
        const report = await reindex(
          { turnLog: s.turnLog, longTerm: s.longTerm, vectors: s.vectors, embedder, log: s.log.child({ component: 'reindex' }) },
          {
            batchSize: o.batchSize,
            ...(o.force ? { force: true } : {}),
            ...(o.pruneOld ? { pruneOld: true } : {}),
            onProgress: (done) => bar.update(done),
          },
        ).finally(() => bar.stop());
        if (o.json) return printJson({ ...report, backend: s.vectors.backend });
        const pruned = report.pruned === null ? '' : `; deleted ${report.pruned} vectors of other models`;
        process.stderr.write(
          `reindexed ${report.total} memories for ${report.embedder} in ${s.vectors.backend}: ${report.embedded} embedded, ${report.kept} already done${pruned} (${(report.ms / 1000).toFixed(1)} s)\n`,
        );
      });
    });
}
