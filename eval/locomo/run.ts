// The LoCoMo evaluation: `npm run eval -- --locomo FILE`. Each conversation is ingested through the
// normal write path as one user (one session per LoCoMo session, the speaker as the turn's `name`, the
// session's date as `created_at`), every category 1–4 question is asked from a new session, and the
// combined pass is scored beside keyword baselines and with each retrieval signal switched off in turn.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SIGNALS, type Signal } from '../../src/retrieval/rank.js';
import { DEFAULT_TOP_K } from '../../src/retrieval/request.js';
import { KeywordBaselines } from '../baselines.js';
import { KS, round, scoreRanking, summarize, type QuestionScore, type Summary } from '../metrics.js';
import { servicePasses, type Rankings } from '../passes.js';
import { Rand } from '../random.js';
import { CATEGORIES, readLocomo, type Category, type LocomoDataset, type RoleConvention } from './dataset.js';

/** how deep every system ranks: the deepest k scored */
const DEPTH = Math.max(...KS);
const CATEGORY_KEYS = Object.keys(CATEGORIES).map(Number) as Category[];
const categoryLabel = (c: Category) => `${c} ${CATEGORIES[c]}`;

export interface LocomoSystem {
  overall: Record<string, number>;
  categories: Record<string, Record<string, number>>;
  /** the same figures per conversation: a rule that helps one conversation and hurts the others is noise */
  conversations: Record<string, Record<string, number>>;
}

export const COMBINED = 'combined (hash)';
/** the same questions asked at the default top_k, as a client that does not set it asks (the others ask for DEPTH and score their first k) */
export const COMBINED_DEFAULT_K = `combined (hash), asked at the default top_k ${DEFAULT_TOP_K}`;
export const BASELINES = {
  content: 'BM25 over content',
  said: 'BM25 over speaker + content',
  like: 'LIKE',
  random: 'random',
} as const;

function flatten(s: Summary): Record<string, number> {
  const out: Record<string, number> = { n: s.n };
  for (const k of KS) out[`recall@${k}`] = s.recall[k];
  for (const k of KS) out[`hit@${k}`] = s.hit[k];
  out.mrr = s.mrr;
  return out;
}

function score(dataset: LocomoDataset, rankings: Rankings): LocomoSystem {
  const scores = dataset.questions.map((q) => ({ q, s: scoreRanking(rankings.get(q.id) ?? [], q.evidence) }));
  const of = (xs: Array<{ s: QuestionScore }>) => flatten(summarize(xs.map((x) => x.s)));
  return {
    overall: of(scores),
    categories: Object.fromEntries(CATEGORY_KEYS.map((c) => [categoryLabel(c), of(scores.filter((x) => x.q.category === c))])),
    conversations: Object.fromEntries(dataset.conversations.map((c) => [c.sample_id, of(scores.filter((x) => x.q.user_id === c.user_id))])),
  };
}

function baselineRankings(dataset: LocomoDataset): Record<string, Rankings> {
  const index = new KeywordBaselines(dataset.turns);
  const rand = new Rand(20240514);
  const byUser = new Map<string, string[]>();
  for (const t of dataset.turns) byUser.set(t.user_id, [...(byUser.get(t.user_id) ?? []), t.id]);
  const out: Record<string, Rankings> = Object.fromEntries(Object.values(BASELINES).map((n) => [n, new Map()]));
  try {
    for (const q of dataset.questions) {
      out[BASELINES.content]!.set(q.id, index.bm25Content(q.user_id, q.query, DEPTH));
      out[BASELINES.said]!.set(q.id, index.bm25Said(q.user_id, q.query, DEPTH));
      out[BASELINES.like]!.set(q.id, index.like(q.user_id, q.query, DEPTH));
      const pool = [...byUser.get(q.user_id)!];
      for (let i = 0; i < DEPTH && i < pool.length; i++) {
        const j = i + Math.floor(rand.next() * (pool.length - i));
        [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      }
      out[BASELINES.random]!.set(q.id, pool.slice(0, DEPTH));
    }
  } finally {
    index.close();
  }
  return out;
}

const f = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(3));

export function renderLocomo(r: Omit<LocomoResult, 'rankings'>): string {
  const { systems, ablation } = r;
  const cats = CATEGORY_KEYS.map(categoryLabel);
  const n = (c: string) => systems[COMBINED]!.categories[c]!.n;
  const lines = [
    `LoCoMo (${r.dataset.roles}): ${r.dataset.conversations.length} conversations, ${r.dataset.turns} turns, ${r.dataset.questions} questions (categories 1–4), hash embedder`,
    '',
    `| system | R@1 | R@5 | R@8 | R@10 | R@20 | H@8 | MRR | ${cats.map((c) => `R@8 ${c} (${n(c)})`).join(' | ')} |`,
    `| --- | ${Array(7 + cats.length).fill('---:').join(' | ')} |`,
  ];
  for (const [name, s] of Object.entries(systems)) {
    const o = s.overall;
    lines.push(`| ${name} | ${KS.map((k) => f(o[`recall@${k}`])).join(' | ')} | ${f(o['hit@8'])} | ${f(o.mrr)} | ${cats.map((c) => f(s.categories[c]!['recall@8'])).join(' | ')} |`);
  }
  const base = systems[COMBINED]!;
  lines.push('', `| signal switched off | R@8 | Δ R@8 | MRR | ${cats.map((c) => `R@8 ${c}`).join(' | ')} |`, `| --- | ${Array(3 + cats.length).fill('---:').join(' | ')} |`);
  lines.push(`| none (combined) | ${f(base.overall['recall@8'])} | | ${f(base.overall.mrr)} | ${cats.map((c) => f(base.categories[c]!['recall@8'])).join(' | ')} |`);
  for (const [signal, s] of Object.entries(ablation)) {
    const delta = round(s.overall['recall@8']! - base.overall['recall@8']!);
    lines.push(
      `| ${signal} | ${f(s.overall['recall@8'])} | ${delta >= 0 ? '+' : ''}${delta.toFixed(3)} | ${f(s.overall.mrr)} | ${cats
        .map((c) => `${f(s.categories[c]!['recall@8'])} (${signed(s.categories[c]!['recall@8']! - base.categories[c]!['recall@8']!)})`)
        .join(' | ')} |`,
    );
  }
  const convs = r.dataset.conversations.map((c) => c.sample_id);
  lines.push('', `| R@8 per conversation | ${convs.join(' | ')} |`, `| --- | ${convs.map(() => '---:').join(' | ')} |`);
  for (const [name, s] of Object.entries(systems)) lines.push(`| ${name} | ${convs.map((c) => f(s.conversations[c]!['recall@8'])).join(' | ')} |`);
  for (const [signal, s] of Object.entries(ablation)) {
    lines.push(`| without ${signal} | ${convs.map((c) => signed(s.conversations[c]!['recall@8']! - base.conversations[c]!['recall@8']!)).join(' | ')} |`);
  }
  return lines.join('\n');
}

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;

export interface LocomoResult {
  dataset: {
    conversations: LocomoDataset['conversations'];
    turns: number;
    questions: number;
    roles: RoleConvention;
    photo_captions: boolean;
    evidence_repairs: { normalised: string[]; dropped: string[]; questions_without_evidence: number };
  };
  systems: Record<string, LocomoSystem>;
  ablation: Record<string, LocomoSystem>;
  against_best_lexical: Record<string, { combined: number; best_lexical: number; ok: boolean }>;
  run: { store: string; ingest_s: number; query_ms_per_question: number; long_term_entries: number };
  /** the combined ranking of every question (turn ids only), for reading misses beside the data file */
  rankings: Record<string, readonly string[]>;
}

export async function evaluateLocomo(
  file: string,
  o: { roles: RoleConvention; captions: boolean; ablate: readonly Signal[]; databaseUrl?: string; progress: (m: string) => void },
): Promise<LocomoResult> {
  const dataset = readLocomo(file, { captions: o.captions, roles: o.roles });
  const { repairs } = dataset;
  o.progress(
    `${file} (${o.roles}): ${dataset.conversations.length} conversations, ${dataset.turns.length} turns, ${dataset.questions.length} questions; evidence ids normalised ${repairs.normalised.length}, dropped ${repairs.dropped.length}, questions left without evidence ${repairs.questionsWithoutEvidence}`,
  );
  const nowOf = new Map(dataset.conversations.map((c) => [c.user_id, Date.parse(c.now)]));
  const service = await servicePasses(dataset.turns, dataset.questions, { name: `locomo-${o.roles}`, depth: DEPTH, ablate: o.ablate, variants: { defaultK: { questions: dataset.questions, depth: DEFAULT_TOP_K } }, nowOf: (u) => nowOf.get(u), databaseUrl: o.databaseUrl, progress: o.progress });
  const systems: Record<string, LocomoSystem> = { [COMBINED]: score(dataset, service.combined), [COMBINED_DEFAULT_K]: score(dataset, service.variants.defaultK!) };
  for (const [name, r] of Object.entries(baselineRankings(dataset))) systems[name] = score(dataset, r);
  const ablation = Object.fromEntries(Object.entries(service.ablation).map(([s, r]) => [s, score(dataset, r)]));
  const lexical = [BASELINES.content, BASELINES.said, BASELINES.like];
  const against_best_lexical = Object.fromEntries(
    CATEGORY_KEYS.map(categoryLabel).map((c) => {
      const best = Math.max(...lexical.map((b) => systems[b]!.categories[c]!['recall@8']!));
      const got = systems[COMBINED]!.categories[c]!['recall@8']!;
      return [c, { combined: got, best_lexical: best, ok: got >= best }];
    }),
  );
  return {
    dataset: {
      conversations: dataset.conversations,
      turns: dataset.turns.length,
      questions: dataset.questions.length,
      roles: o.roles,
      photo_captions: o.captions,
      evidence_repairs: { normalised: repairs.normalised, dropped: repairs.dropped, questions_without_evidence: repairs.questionsWithoutEvidence },
    },
    systems,
    ablation,
    against_best_lexical,
    run: { store: service.store, ingest_s: round(service.ingestMs / 1000, 1), query_ms_per_question: round(service.queryMsPerQuestion, 2), long_term_entries: service.longTermEntries },
    rankings: Object.fromEntries(service.combined),
  };
}

export async function runLocomo(file: string, o: { out: string; ablation: boolean; captions: boolean; roles: RoleConvention; signals?: readonly Signal[]; databaseUrl?: string }): Promise<void> {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const started = performance.now();
  const { rankings, ...result } = await evaluateLocomo(file, { roles: o.roles, captions: o.captions, ablate: o.ablation ? (o.signals ?? SIGNALS) : [], databaseUrl: o.databaseUrl, progress: log });
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, 'locomo.json'), `${JSON.stringify({ generated_at: new Date().toISOString(), file: resolve(file), ...result }, null, 2)}\n`);
  writeFileSync(join(o.out, 'locomo-rankings.json'), `${JSON.stringify(rankings)}\n`);
  process.stdout.write(`${renderLocomo(result)}\n`);
  const misses = Object.entries(result.against_best_lexical).filter(([, v]) => !v.ok).map(([c]) => c);
  log(`combined vs the best lexical baseline per category: ${misses.length === 0 ? 'at or above in every category' : `below in ${misses.join(', ')}`}`);
  log(`written ${resolve(o.out, 'locomo.json')} in ${((performance.now() - started) / 1000).toFixed(1)} s (${result.run.query_ms_per_question.toFixed(1)} ms per question)`);
}
