// The RealMem evaluation: `npm run eval -- --realmem DIR`. Each persona is ingested through the normal
// write path as one user (one session per RealMem session, dated as eval/realmem/dataset.ts says), every
// query turn is asked from a new session with `filters.created_before` = its session's start (only earlier
// sessions count: the dataset's protocol), and session recall is scored beside BM25 over the turns under
// the same protocol, and with each retrieval signal switched off in turn. The same store is asked once
// more under the protocol issue 24 scored the held-out personas with (UNFILTERED_DEPTH), beside BM25
// under it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SIGNALS, type Signal } from '../../src/retrieval/rank.js';
import { DEFAULT_TOP_K } from '../../src/retrieval/request.js';
import { KeywordBaselines } from '../baselines.js';
import { round } from '../metrics.js';
import { servicePasses, type Rankings } from '../passes.js';
import { readRealmem, type RealmemDataset, type RealmemQuestion } from './dataset.js';

export const REALMEM_KS = [5, 8, 20] as const;
const DEPTH = Math.max(...REALMEM_KS);
export const COMBINED = 'combined (hash)';
/** the same questions asked at the default top_k, as a client that does not set it asks (the others ask for 20 and score their first 8) */
export const COMBINED_DEFAULT_K = `combined (hash), asked at the default top_k ${DEFAULT_TOP_K}`;
export const BM25 = 'BM25 over turns';
/**
 * The same BM25 with each user's own statistics (a table per persona): FTS5's bm25() counts words over
 * every persona's turns, which a service must not do (one tenant's scores would move with another's
 * words). Shown beside it so that the part of the gap made of shared statistics is seen.
 */
export const BM25_OWN = "BM25 over turns, the user's own statistics";
/**
 * The protocol issue 24 scored the held-out personas with: every query turn asked without a filter at
 * UNFILTERED_DEPTH, the turns of its own session and later ones dropped from the ranking before scoring
 * (the filtered retrieve was slow then). Run beside the dataset's protocol on the same store, so that a
 * gain that holds only under one of them shows.
 */
export const UNFILTERED_DEPTH = 50;
export const COMBINED_UNFILTERED = `combined (hash), asked unfiltered at top_k ${UNFILTERED_DEPTH}, later sessions dropped`;
export const BM25_UNFILTERED = `BM25 over turns, unfiltered at ${UNFILTERED_DEPTH}, later sessions dropped`;
/** how the turns' roles are sent: as the dataset has them, or every turn as the user's (roles must not decide relevance) */
export type RealmemRoles = 'as-is' | 'both-user';

export type Figures = Record<string, number>;
export interface RealmemSystem {
  overall: Figures;
  categories: Record<string, Figures>;
  personas: Record<string, Figures>;
}

export interface RealmemResult {
  /** `roles`: the turns sent under each role */
  dataset: { personas: RealmemDataset['personas']; turns: number; roles: Record<string, number>; questions: number; longest_turn: number; repairs: RealmemDataset['repairs'] };
  systems: Record<string, RealmemSystem>;
  ablation: Record<string, RealmemSystem>;
  against_bm25: Record<string, { combined: number; bm25: number; ok: boolean }>;
  run: { store: string; ingest_s: number; query_ms_per_question: number; long_term_entries: number };
  /** the combined ranking of every query turn (turn ids only), for reading misses beside the data */
  rankings: Record<string, readonly string[]>;
}

interface QuestionScore {
  recall: Record<number, number>;
  all: Record<number, number>;
  rr: number;
}

/** Session recall@k (gold sessions holding a returned turn / gold sessions), recall_all@k and the reciprocal rank of the first turn of a gold session. */
export function scoreSessions(ranked: readonly string[], gold: readonly string[], sessionOf: (turnId: string) => string | undefined): QuestionScore {
  const want = new Set(gold);
  const firstRank = new Map<string, number>();
  ranked.forEach((id, i) => {
    const s = sessionOf(id);
    if (s !== undefined && want.has(s) && !firstRank.has(s)) firstRank.set(s, i + 1);
  });
  const recall: Record<number, number> = {};
  const all: Record<number, number> = {};
  for (const k of REALMEM_KS) {
    const found = [...firstRank.values()].filter((r) => r <= k).length;
    recall[k] = found / want.size;
    all[k] = found === want.size ? 1 : 0;
  }
  const first = firstRank.size > 0 ? Math.min(...firstRank.values()) : null;
  return { recall, all, rr: first === null ? 0 : 1 / first };
}

function summary(scores: readonly QuestionScore[]): Figures {
  const n = scores.length;
  const mean = (f: (s: QuestionScore) => number) => (n === 0 ? 0 : round(scores.reduce((a, s) => a + f(s), 0) / n));
  const out: Figures = { n };
  for (const k of REALMEM_KS) out[`recall@${k}`] = mean((s) => s.recall[k]!);
  for (const k of REALMEM_KS) out[`recall_all@${k}`] = mean((s) => s.all[k]!);
  out.mrr = mean((s) => s.rr);
  return out;
}

function score(dataset: RealmemDataset, rankings: Rankings): RealmemSystem {
  const sessionOf = new Map(dataset.turns.map((t) => [t.id, t.session_id]));
  const scored = dataset.questions.map((q) => ({ q, s: scoreSessions(rankings.get(q.id) ?? [], q.gold, (id) => sessionOf.get(id)) }));
  const of = (pick: (q: RealmemQuestion) => boolean) => summary(scored.filter((x) => pick(x.q)).map((x) => x.s));
  const categories = [...new Set(dataset.questions.map((q) => q.category))].sort();
  return {
    overall: of(() => true),
    categories: Object.fromEntries(categories.map((c) => [c, of((q) => q.category === c)])),
    personas: Object.fromEntries(dataset.personas.map((p) => [p.persona, of((q) => q.persona === p.persona)])),
  };
}

function bm25Rankings(dataset: RealmemDataset, perUser = false): Rankings {
  const users = perUser ? [...new Set(dataset.turns.map((t) => t.user_id))] : [null];
  const out: Rankings = new Map();
  for (const user of users) {
    const index = new KeywordBaselines(user === null ? dataset.turns : dataset.turns.filter((t) => t.user_id === user));
    try {
      for (const q of dataset.questions) if (user === null || q.user_id === user) out.set(q.id, index.bm25Before(q.user_id, q.query, q.created_before, DEPTH));
    } finally {
      index.close();
    }
  }
  return out;
}

/** BM25 over every turn, asked without a filter at UNFILTERED_DEPTH (see withoutLater) */
function bm25Unfiltered(dataset: RealmemDataset): Rankings {
  const index = new KeywordBaselines(dataset.turns);
  try {
    return new Map(dataset.questions.map((q) => [q.id, index.bm25(q.user_id, q.query, UNFILTERED_DEPTH)]));
  } finally {
    index.close();
  }
}

function countBy<T>(xs: readonly T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

/** Each ranking without the turns of its query's session and later ones: the held-out protocol's cut. */
export function withoutLater(dataset: Pick<RealmemDataset, 'turns' | 'questions'>, rankings: Rankings): Rankings {
  const createdAt = new Map(dataset.turns.map((t) => [t.id, t.created_at]));
  return new Map(dataset.questions.map((q) => [q.id, (rankings.get(q.id) ?? []).filter((id) => (createdAt.get(id) ?? q.created_before) < q.created_before)]));
}

export async function evaluateRealmem(
  dir: string,
  o: { ablate: readonly Signal[]; sample?: number; roles?: RealmemRoles; databaseUrl?: string; progress: (m: string) => void },
): Promise<RealmemResult> {
  const dataset = readRealmem(dir);
  if (o.roles === 'both-user') dataset.turns = dataset.turns.map((t) => ({ ...t, role: 'user' }));
  // every sample-th query turn only: a quicker look while working on the pass, never a reported figure
  if (o.sample && o.sample > 1) dataset.questions = dataset.questions.filter((_, i) => i % o.sample! === 0);
  const { repairs } = dataset;
  o.progress(
    `${dir}: ${dataset.personas.length} personas, ${dataset.turns.length} turns, ${dataset.questions.length} query turns; control characters removed from ${repairs.controlCharsRemoved} turns, queries cut ${repairs.queriesCut}, labels dropped ${repairs.goldDropped}, queries without labels ${repairs.questionsWithoutGold}`,
  );
  // each query is asked when its session starts: "yesterday" and "this week" in it are that day's, and
  // recency counts back from it (the host's clock would put every period of the dataset in the future)
  const questions = dataset.questions.map((q) => ({ id: q.id, user_id: q.user_id, query: q.query, filters: { created_before: q.created_before }, now: Date.parse(q.created_before) }));
  const unfiltered = questions.map(({ filters: _f, ...q }) => q);
  const service = await servicePasses(dataset.turns, questions, {
    name: 'realmem',
    depth: DEPTH,
    ablate: o.ablate,
    variants: { unfiltered: { questions: unfiltered, depth: UNFILTERED_DEPTH }, defaultK: { questions, depth: DEFAULT_TOP_K } },
    // a deployment holding such conversations accepts their longest turn (the default is 32,000 characters)
    config: { max_turn_chars: Math.max(32_000, dataset.longestTurn) },
    databaseUrl: o.databaseUrl,
    progress: o.progress,
  });
  const systems: Record<string, RealmemSystem> = {
    [COMBINED]: score(dataset, service.combined),
    [BM25]: score(dataset, bm25Rankings(dataset)),
    [BM25_OWN]: score(dataset, bm25Rankings(dataset, true)),
    [COMBINED_DEFAULT_K]: score(dataset, service.variants.defaultK!),
    [COMBINED_UNFILTERED]: score(dataset, withoutLater(dataset, service.variants.unfiltered!)),
    [BM25_UNFILTERED]: score(dataset, withoutLater(dataset, bm25Unfiltered(dataset))),
  };
  const ablation = Object.fromEntries(Object.entries(service.ablation).map(([s, r]) => [s, score(dataset, r)]));
  const against_bm25 = Object.fromEntries(
    Object.keys(systems[COMBINED]!.categories).map((c) => {
      const combined = systems[COMBINED]!.categories[c]!['recall@8']!;
      const bm25 = systems[BM25]!.categories[c]!['recall@8']!;
      return [c, { combined, bm25, ok: combined >= bm25 }];
    }),
  );
  return {
    dataset: { personas: dataset.personas, turns: dataset.turns.length, roles: countBy(dataset.turns, (t) => t.role), questions: dataset.questions.length, longest_turn: dataset.longestTurn, repairs },
    systems,
    ablation,
    against_bm25,
    run: { store: service.store, ingest_s: round(service.ingestMs / 1000, 1), query_ms_per_question: round(service.queryMsPerQuestion, 2), long_term_entries: service.longTermEntries },
    rankings: Object.fromEntries(service.combined),
  };
}

const f = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(3));
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;

export function renderRealmem(r: Omit<RealmemResult, 'rankings'>): string {
  const cats = Object.keys(r.systems[COMBINED]!.categories);
  const lines = [
    `RealMem: ${r.dataset.personas.length} personas, ${r.dataset.turns} turns, ${r.dataset.questions} query turns, session recall (only earlier sessions count), hash embedder`,
    '',
    `| system | R@5 | R@8 | R@20 | all@5 | all@8 | all@20 | MRR | ${cats.map((c) => `R@8 ${c} (${r.systems[COMBINED]!.categories[c]!.n})`).join(' | ')} |`,
    `| --- | ${Array(7 + cats.length).fill('---:').join(' | ')} |`,
  ];
  for (const [name, s] of Object.entries(r.systems)) {
    const o = s.overall;
    lines.push(`| ${name} | ${REALMEM_KS.map((k) => f(o[`recall@${k}`])).join(' | ')} | ${REALMEM_KS.map((k) => f(o[`recall_all@${k}`])).join(' | ')} | ${f(o.mrr)} | ${cats.map((c) => f(s.categories[c]!['recall@8'])).join(' | ')} |`);
  }
  if (Object.keys(r.ablation).length > 0) {
    const base = r.systems[COMBINED]!;
    lines.push('', `| signal switched off | R@8 | Δ R@8 | MRR | ${cats.map((c) => `R@8 ${c}`).join(' | ')} |`, `| --- | ${Array(3 + cats.length).fill('---:').join(' | ')} |`);
    for (const [signal, s] of Object.entries(r.ablation)) {
      lines.push(
        `| ${signal} | ${f(s.overall['recall@8'])} | ${signed(s.overall['recall@8']! - base.overall['recall@8']!)} | ${f(s.overall.mrr)} | ${cats
          .map((c) => `${f(s.categories[c]!['recall@8'])} (${signed(s.categories[c]!['recall@8']! - base.categories[c]!['recall@8']!)})`)
          .join(' | ')} |`,
      );
    }
  }
  const personas = r.dataset.personas.map((p) => p.persona);
  lines.push('', `| R@8 per persona | ${personas.join(' | ')} |`, `| --- | ${personas.map(() => '---:').join(' | ')} |`);
  for (const [name, s] of Object.entries(r.systems)) lines.push(`| ${name} | ${personas.map((p) => f(s.personas[p]!['recall@8'])).join(' | ')} |`);
  return lines.join('\n');
}

export async function runRealmem(dir: string, o: { out: string; ablation: boolean; sample?: number; signals?: readonly Signal[]; databaseUrl?: string }): Promise<void> {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const started = performance.now();
  const { rankings, ...result } = await evaluateRealmem(dir, { ablate: o.ablation ? (o.signals ?? SIGNALS) : [], sample: o.sample, databaseUrl: o.databaseUrl, progress: log });
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, 'realmem.json'), `${JSON.stringify({ generated_at: new Date().toISOString(), dir: resolve(dir), ...result }, null, 2)}\n`);
  writeFileSync(join(o.out, 'realmem-rankings.json'), `${JSON.stringify(rankings)}\n`);
  process.stdout.write(`${renderRealmem(result)}\n`);
  const misses = Object.entries(result.against_bm25).filter(([, v]) => !v.ok).map(([c]) => c);
  log(`combined vs BM25 per category: ${misses.length === 0 ? 'at or above in every category' : `below in ${misses.join(', ')}`}`);
  log(`written ${resolve(o.out, 'realmem.json')} in ${((performance.now() - started) / 1000).toFixed(1)} s (${result.run.query_ms_per_question.toFixed(1)} ms per question)`);
}
