// Runs the real service over a dataset for one embedder: wire() on a temp SQLite file, every session
// ingested through the normal write path, then each question retrieved from a NEW session as its user.
// Returns the ranked ids of the combined pass and of each tier on its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { wire } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import type { Tier } from '../src/domain/entry.js';
import { RetrieveRequestSchema } from '../src/retrieval/request.js';
import type { EvalDataset, EvalQuestion } from './dataset.js';
import { evalStore } from './store.js';

export interface EmbedderChoice {
  /** short label for the tables */
  label: string;
  /** config keys that select it (embedding_model, model_dir) */
  config: Record<string, unknown>;
}

export interface RetrievedResult {
  id: string;
  tier: Tier;
  /** the tiers whose own lists held it */
  foundBy: Tier[];
}

export interface QuestionRun {
  question: EvalQuestion;
  /** the combined pass at top_k 8 (what the chat pipeline asks for) */
  top8: RetrievedResult[];
  /** the combined pass at top_k 20 */
  top20: string[];
  /** each tier alone, 20 deep */
  semanticAlone: string[];
  longTermAlone: string[];
}

export interface ServiceRun {
  label: string;
  embedder: string;
  available: true;
  ingestMs: number;
  queryMs: number;
  turnsStored: { turn_log: number; long_term: number; vectors: number };
  /** evidence turns (by id) that importance scoring kept out of the long-term tier */
  droppedEvidence: string[];
  /** tier passes skipped over budget or failed, which would make the figures unfair */
  skippedTiers: number;
  questions: QuestionRun[];
}

export type ServiceOutcome = ServiceRun | { label: string; available: false; reason: string };

export interface ServiceRunOptions {
  /** extra config (tests shrink things); budgets are raised so a busy machine cannot skip a tier */
  config?: Record<string, unknown>;
  /** run on a scratch database of this PostgreSQL server instead of a temp SQLite file (see eval/store.ts) */
  databaseUrl?: string;
  onProgress?: (message: string) => void;
}

export async function runService(dataset: EvalDataset, choice: EmbedderChoice, options: ServiceRunOptions = {}): Promise<ServiceOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'nc-eval-'));
  const progress = options.onProgress ?? (() => {});
  const store = await evalStore(dir, 'eval', options.databaseUrl);
  const config = parseConfig({
    ...store.config,
    log_level: 'silent',
    short_term_budget_ms: 60_000,
    semantic_budget_ms: 60_000,
    long_term_budget_ms: 60_000,
    ...choice.config,
    ...options.config,
  });
  const services = await wire(config, { logger: pino({ level: 'silent' }), reconcile: false }).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  try {
    const embedder = await services.embedders.ready();
    if (!embedder) return { label: choice.label, available: false, reason: services.embedders.error ?? 'embedder did not load' };

    // sessions in the order they happened, each written as one batch through the write path
    const sessions = new Map<string, typeof dataset.turns>();
    for (const t of dataset.turns) sessions.set(t.session_id, [...(sessions.get(t.session_id) ?? []), t]);
    const ordered = [...sessions.values()].sort((a, b) => a[0]!.created_at.localeCompare(b[0]!.created_at));
    const started = performance.now();
    let written = 0;
    for (const turns of ordered) {
      await services.writePath.addTurns(turns);
      written += turns.length;
      if (written % 2000 < turns.length) progress(`${choice.label}: ${written}/${dataset.turns.length} turns written`);
    }
    await services.queue.idle();
    const ingestMs = performance.now() - started;
    const log = await services.turnLog.counts();
    if (log.pending_embed > 0 || log.pending_persist > 0) throw new Error(`ingest left work pending: ${JSON.stringify(log)}`);

    const droppedEvidence: string[] = [];
    const evidence = new Map(dataset.questions.flatMap((q) => q.evidence.map((id) => [`${q.user_id}\u0000${id}`, { user: q.user_id, id }] as const)));
    for (const { user, id } of evidence.values()) {
      if (!(await services.longTerm.get(user, id))) droppedEvidence.push(id);
    }

    const now = Date.parse(dataset.now);
    const skippedBefore = countSkipped(services.skipped);
    const queryStarted = performance.now();
    const questions: QuestionRun[] = [];
    for (const q of dataset.questions) {
      const request = (topK: number) =>
        RetrieveRequestSchema.parse({ query: q.query, user_id: q.user_id, session_id: `eval-new-session-${q.id}`, top_k: topK });
      const r8 = await services.retriever.retrieve(request(8), now);
      const r20 = await services.retriever.retrieve(request(20), now);
      const [vector] = await embedder.embed([q.query], 'query');
      const semantic = await services.vectors.search(embedder, vector!, { user_id: q.user_id }, 20);
      const text = await services.longTerm.searchText(q.user_id, q.query, { limit: 20 });
      questions.push({
        question: q,
        top8: r8.results.map((r) => ({ id: r.id, tier: r.tier, foundBy: Object.keys(r.explain.ranks) as Tier[] })),
        top20: r20.results.map((r) => r.id),
        semanticAlone: semantic.filter((h) => h.score > 0).map((h) => h.id),
        longTermAlone: text.map((h) => h.entry.id),
      });
    }
    const queryMs = performance.now() - queryStarted;
    return {
      label: choice.label,
      embedder: embedder.id,
      available: true,
      ingestMs,
      queryMs,
      turnsStored: { turn_log: log.total, long_term: await services.longTerm.count(), vectors: await services.vectors.count(embedder) },
      droppedEvidence,
      skippedTiers: countSkipped(services.skipped) - skippedBefore,
      questions,
    };
  } finally {
    await services.close();
    await store.close().finally(() => rmSync(dir, { recursive: true, force: true }));
  }
}

function countSkipped(s: Record<Tier, { timeout: number; error: number }> | undefined): number {
  if (!s) return 0;
  return Object.values(s).reduce((n, x) => n + x.timeout + x.error, 0);
}
