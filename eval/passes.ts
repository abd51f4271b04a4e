// Runs the real service over a set of conversations: wire() on a scratch store with the `hash` embedder,
// every session written as one batch through the normal write path, then every question retrieved from a
// new session as its user — the combined pass, and the same pass with each named signal switched off.
// Shared by the LoCoMo and RealMem evaluations (eval/locomo/, eval/realmem/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { wire } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import type { Role } from '../src/domain/record.js';
import type { RecordFilterInput } from '../src/domain/filters.js';
import { Retriever } from '../src/retrieval/retrieve.js';
import type { Signal } from '../src/retrieval/rank.js';
import { RetrieveRequestSchema } from '../src/retrieval/request.js';
import { evalStore } from './store.js';

export type Rankings = Map<string, readonly string[]>;

export interface PassTurn {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  content: string;
  created_at: string;
}

export interface PassQuestion {
  id: string;
  user_id: string;
  query: string;
  /** what the question is asked with (RealMem: only the sessions before its own) */
  filters?: RecordFilterInput;
  /** when the question is asked (ms; RealMem: its session's start), else its user's `nowOf` */
  now?: number;
}

export interface PassRankings {
  combined: Rankings;
  /** each of `PassOptions.variants`, asked with the combined pass only */
  variants: Record<string, Rankings>;
  /** the combined pass with one signal switched off */
  ablation: Record<string, Rankings>;
  ingestMs: number;
  queryMsPerQuestion: number;
  longTermEntries: number;
  /** where the durable store was (eval/store.ts) */
  store: string;
}

export interface PassOptions {
  name: string;
  depth: number;
  ablate: readonly Signal[];
  /** the "now" of each user's questions (ms), else the host's clock */
  nowOf?: (userId: string) => number | undefined;
  /** config keys beside the eval's own (e.g. max_turn_chars for a dataset with longer turns) */
  config?: Record<string, unknown>;
  databaseUrl?: string;
  progress: (m: string) => void;
  /** other question sets asked of the same store with every signal on (another protocol), each at its own depth */
  variants?: Record<string, { questions: readonly PassQuestion[]; depth: number }>;
}

export async function servicePasses(turns: readonly PassTurn[], questions: readonly PassQuestion[], o: PassOptions): Promise<PassRankings> {
  const dir = mkdtempSync(join(tmpdir(), `nc-${o.name}-`));
  const store = await evalStore(dir, o.name, o.databaseUrl);
  o.progress(`${o.name}: store ${store.label}`);
  const config = parseConfig({
    ...store.config,
    log_level: 'silent',
    embedding_model: 'hash',
    // a busy machine must not skip a tier and make the figures unfair
    short_term_budget_ms: 60_000,
    semantic_budget_ms: 60_000,
    long_term_budget_ms: 60_000,
    ...o.config,
  });
  const services = await wire(config, { logger: pino({ level: 'silent' }), reconcile: false, autoCompact: false }).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  try {
    if (!(await services.embedders.ready())) throw new Error(`the hash embedder did not load: ${services.embedders.error ?? 'unknown'}`);
    const started = performance.now();
    const sessions = new Map<string, PassTurn[]>();
    for (const t of turns) sessions.set(t.session_id, [...(sessions.get(t.session_id) ?? []), t]);
    // a turn without a speaker's name is sent without the field, as a client would
    for (const batch of sessions.values()) await services.writePath.addTurns(batch.map(({ name, ...t }) => (name === null ? t : { ...t, name })));
    await services.queue.idle();
    const ingestMs = performance.now() - started;
    const pending = await services.turnLog.counts();
    if (pending.pending_embed > 0 || pending.pending_persist > 0) throw new Error(`ingest left work pending: ${JSON.stringify(pending)}`);
    o.progress(`${o.name}: ingested ${turns.length} turns in ${(ingestMs / 1000).toFixed(1)} s`);

    const run = async (retriever: Retriever, asked = questions, depth = o.depth): Promise<Rankings> => {
      const out: Rankings = new Map();
      for (const q of asked) {
        const req = RetrieveRequestSchema.parse({ query: q.query, user_id: q.user_id, session_id: `eval-question-${q.id}`, top_k: depth, ...(q.filters ? { filters: q.filters } : {}) });
        const r = await retriever.retrieve(req, q.now ?? o.nowOf?.(q.user_id));
        out.set(q.id, r.results.map((x) => x.id));
      }
      return out;
    };
    const queryStarted = performance.now();
    const combined = await run(services.retriever);
    const queryMsPerQuestion = (performance.now() - queryStarted) / Math.max(1, questions.length);
    o.progress(`${o.name}: ${questions.length} questions, ${queryMsPerQuestion.toFixed(1)} ms each`);
    const ablation: Record<string, Rankings> = {};
    for (const signal of o.ablate) {
      ablation[signal] = await run(new Retriever({ ...services.retrieverDeps, signals: { [signal]: false } }));
    }
    const variants: Record<string, Rankings> = {};
    for (const [name, v] of Object.entries(o.variants ?? {})) variants[name] = await run(services.retriever, v.questions, v.depth);
    return { combined, variants, ablation, ingestMs, queryMsPerQuestion, longTermEntries: await services.longTerm.count(), store: store.label };
  } finally {
    await services.close();
    await store.close().finally(() => rmSync(dir, { recursive: true, force: true }));
  }
}
