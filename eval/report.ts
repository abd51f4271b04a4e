// Turns ranked lists into the evaluation's figures (results.json) and its tables (results.md).
import type { Tier } from '../src/domain/entry.js';
import { QUESTION_TYPES, QUESTION_TYPE_NOTES, describeDataset, type EvalDataset, type EvalQuestion, type QuestionType } from './dataset.js';
import { KS, round, scoreRanking, summarize, type QuestionScore, type Summary } from './metrics.js';
import type { ServiceOutcome, ServiceRun } from './service-run.js';

/** One ranking system: a list per question (combined passes carry their top_k 8 list separately). */
export interface SystemRanking {
  name: string;
  kind: 'combined' | 'tier' | 'baseline';
  lists: Map<string, { top8: readonly string[]; top20: readonly string[] }>;
}

export interface SystemResult {
  name: string;
  kind: SystemRanking['kind'];
  overall: Summary;
  by_type: Record<QuestionType, Summary>;
}

export interface Attribution {
  system: string;
  /** evidence turns in the top 8, by the tier each was reported under */
  reported_by: Record<Tier, number>;
  /** evidence turns in the top 8, by every tier whose own list held it */
  found_by: Record<Tier, number>;
  evidence_in_top8: number;
  evidence_total: number;
}

export interface Results {
  generated_at: string;
  dataset: ReturnType<typeof describeDataset>;
  question_types: Record<QuestionType, string>;
  systems: SystemResult[];
  attribution: Attribution[];
  importance: { threshold: number; evidence_turns: number; dropped: number; dropped_by_type: Record<QuestionType, number> } | null;
  acceptance: Acceptance | null;
  runs: Array<{ label: string; embedder: string; ingest_s: number; query_ms_per_question: number; stored: ServiceRun['turnsStored']; skipped_tiers: number }>;
  unavailable: Array<{ label: string; reason: string }>;
}

export interface Acceptance {
  system: string;
  baseline: string;
  recall8: number;
  baseline_recall8: number;
  margin: number;
  per_type: Record<QuestionType, { system: number; baseline: number; ok: boolean }>;
  passed: boolean;
}

export const BM25_BASELINE = 'BM25 over all turns (baseline)';
export const LIKE_BASELINE = 'LIKE over all turns (baseline)';

/** Maps every turn id to the first id of the same user with the same text: the stores keep one copy. */
export function canonicalIds(dataset: EvalDataset): (id: string) => string {
  const first = new Map<string, string>();
  const canon = new Map<string, string>();
  for (const t of dataset.turns) {
    const key = `${t.user_id}\u0000${t.content}`;
    if (!first.has(key)) first.set(key, t.id);
    canon.set(t.id, first.get(key)!);
  }
  return (id) => canon.get(id) ?? id;
}

function scoreQuestion(q: EvalQuestion, lists: { top8: readonly string[]; top20: readonly string[] }, canon: (id: string) => string): QuestionScore {
  const evidence = q.evidence.map(canon);
  const stale = q.stale.map(canon);
  const s8 = scoreRanking(lists.top8.map(canon), evidence, stale);
  const s20 = scoreRanking(lists.top20.map(canon), evidence, stale);
  return {
    recall: { 1: s8.recall[1], 5: s8.recall[5], 8: s8.recall[8], 10: s20.recall[10], 20: s20.recall[20] },
    hit: { 1: s8.hit[1], 5: s8.hit[5], 8: s8.hit[8], 10: s20.hit[10], 20: s20.hit[20] },
    rr: s20.rr,
    newerFirst: s20.newerFirst,
  };
}

export function evaluateSystem(dataset: EvalDataset, system: SystemRanking): SystemResult {
  const canon = canonicalIds(dataset);
  const scored = dataset.questions.map((q) => {
    const lists = system.lists.get(q.id);
    if (!lists) throw new Error(`${system.name}: no ranking for ${q.id}`);
    return { type: q.type, score: scoreQuestion(q, lists, canon) };
  });
  const by_type = Object.fromEntries(QUESTION_TYPES.map((t) => [t, summarize(scored.filter((s) => s.type === t).map((s) => s.score))])) as Record<QuestionType, Summary>;
  return { name: system.name, kind: system.kind, overall: summarize(scored.map((s) => s.score)), by_type };
}

/** The rankings a service run yields: the combined pass and each tier alone. */
export function systemsOf(run: ServiceRun): SystemRanking[] {
  const combined = new Map<string, { top8: string[]; top20: string[] }>();
  const semantic = new Map<string, { top8: string[]; top20: string[] }>();
  const longTerm = new Map<string, { top8: string[]; top20: string[] }>();
  for (const q of run.questions) {
    combined.set(q.question.id, { top8: q.top8.map((r) => r.id), top20: q.top20 });
    semantic.set(q.question.id, { top8: q.semanticAlone.slice(0, 8), top20: q.semanticAlone });
    longTerm.set(q.question.id, { top8: q.longTermAlone.slice(0, 8), top20: q.longTermAlone });
  }
  return [
    { name: `combined (${run.label})`, kind: 'combined', lists: combined },
    { name: `semantic tier alone (${run.label})`, kind: 'tier', lists: semantic },
    { name: 'long-term tier alone (FTS5)', kind: 'tier', lists: longTerm },
  ];
}

export function attribution(dataset: EvalDataset, run: ServiceRun): Attribution {
  const canon = canonicalIds(dataset);
  const zero = (): Record<Tier, number> => ({ short_term: 0, semantic: 0, long_term: 0 });
  const out: Attribution = { system: `combined (${run.label})`, reported_by: zero(), found_by: zero(), evidence_in_top8: 0, evidence_total: 0 };
  for (const q of run.questions) {
    const evidence = new Set(q.question.evidence.map(canon));
    out.evidence_total += evidence.size;
    const seen = new Set<string>();
    for (const r of q.top8) {
      const id = canon(r.id);
      if (!evidence.has(id) || seen.has(id)) continue;
      seen.add(id);
      out.evidence_in_top8++;
      out.reported_by[r.tier]++;
      for (const t of r.foundBy) out.found_by[t]++;
    }
  }
  return out;
}

export function importanceReport(dataset: EvalDataset, run: ServiceRun, threshold: number): NonNullable<Results['importance']> {
  const dropped = new Set(run.droppedEvidence);
  const dropped_by_type = Object.fromEntries(QUESTION_TYPES.map((t) => [t, 0])) as Record<QuestionType, number>;
  const counted = new Set<string>();
  for (const q of dataset.questions) {
    for (const id of q.evidence) {
      if (dropped.has(id) && !counted.has(`${q.type}/${id}`)) {
        counted.add(`${q.type}/${id}`);
        dropped_by_type[q.type]++;
      }
    }
  }
  return { threshold, evidence_turns: new Set(dataset.questions.flatMap((q) => q.evidence)).size, dropped: dropped.size, dropped_by_type };
}

export function acceptance(systems: readonly SystemResult[], system: string, baseline = BM25_BASELINE): Acceptance | null {
  const s = systems.find((x) => x.name === system);
  const b = systems.find((x) => x.name === baseline);
  if (!s || !b) return null;
  const per_type = Object.fromEntries(
    QUESTION_TYPES.map((t) => [t, { system: s.by_type[t].recall[8], baseline: b.by_type[t].recall[8], ok: s.by_type[t].recall[8] >= b.by_type[t].recall[8] }]),
  ) as Acceptance['per_type'];
  const margin = round(s.overall.recall[8] - b.overall.recall[8]);
  return {
    system,
    baseline,
    recall8: s.overall.recall[8],
    baseline_recall8: b.overall.recall[8],
    margin,
    per_type,
    passed: margin >= 0.1 && Object.values(per_type).every((p) => p.ok),
  };
}

export function buildResults(
  dataset: EvalDataset,
  outcomes: readonly ServiceOutcome[],
  baselines: readonly SystemRanking[],
  importanceThreshold: number,
): Results {
  const runs = outcomes.filter((o): o is ServiceRun => o.available);
  const rankings: SystemRanking[] = [];
  runs.forEach((run, i) => {
    // the long-term tier does not depend on the embedder: list it once
    rankings.push(...systemsOf(run).filter((s) => i === 0 || s.kind !== 'tier' || !s.name.startsWith('long-term')));
  });
  rankings.push(...baselines);
  const systems = rankings.map((s) => evaluateSystem(dataset, s));
  return {
    generated_at: new Date().toISOString(),
    dataset: describeDataset(dataset),
    question_types: QUESTION_TYPE_NOTES,
    systems,
    attribution: runs.map((r) => attribution(dataset, r)),
    importance: runs[0] ? importanceReport(dataset, runs[0], importanceThreshold) : null,
    acceptance: runs[0] ? acceptance(systems, `combined (${runs[0].label})`) : null,
    runs: runs.map((r) => ({
      label: r.label,
      embedder: r.embedder,
      ingest_s: round(r.ingestMs / 1000, 1),
      query_ms_per_question: round(r.queryMs / Math.max(1, r.questions.length), 2),
      stored: r.turnsStored,
      skipped_tiers: r.skippedTiers,
    })),
    unavailable: outcomes.filter((o): o is Extract<ServiceOutcome, { available: false }> => !o.available).map((o) => ({ label: o.label, reason: o.reason })),
  };
}

const f = (x: number | null) => (x === null ? '–' : x.toFixed(3));

export function renderMarkdown(r: Results): string {
  const d = r.dataset;
  const lines: string[] = [];
  lines.push('# Retrieval evaluation', '');
  lines.push(
    `Dataset: seed ${d.seed}, ${d.users} users, ${d.sessions} sessions, ${d.turns} turns (${d.participants} named participants), ` +
      `${d.first_turn?.slice(0, 10)} to ${d.last_turn?.slice(0, 10)}; ${d.questions} questions asked from a new session at ${d.asked_at.slice(0, 10)}.`,
    '',
  );
  lines.push('## Overall', '');
  lines.push(`| system | ${KS.map((k) => `R@${k}`).join(' | ')} | ${KS.map((k) => `H@${k}`).join(' | ')} | MRR |`);
  lines.push(`| --- | ${KS.map(() => '---:').join(' | ')} | ${KS.map(() => '---:').join(' | ')} | ---: |`);
  for (const s of r.systems) {
    lines.push(`| ${s.name} | ${KS.map((k) => f(s.overall.recall[k])).join(' | ')} | ${KS.map((k) => f(s.overall.hit[k])).join(' | ')} | ${f(s.overall.mrr)} |`);
  }
  for (const [title, pick] of [
    ['Recall@8 by question type', (x: Summary) => x.recall[8]],
    ['Hit@8 by question type', (x: Summary) => x.hit[8]],
    ['MRR by question type', (x: Summary) => x.mrr],
  ] as const) {
    lines.push('', `## ${title}`, '');
    lines.push(`| system | ${QUESTION_TYPES.map((t) => `${t} (${d.questions_by_type[t]})`).join(' | ')} |`);
    lines.push(`| --- | ${QUESTION_TYPES.map(() => '---:').join(' | ')} |`);
    for (const s of r.systems) lines.push(`| ${s.name} | ${QUESTION_TYPES.map((t) => f(pick(s.by_type[t]))).join(' | ')} |`);
  }
  lines.push('', '## Updated facts: newer statement ranked above the superseded one (within 20)', '');
  lines.push('| system | newer first |', '| --- | ---: |');
  for (const s of r.systems) lines.push(`| ${s.name} | ${f(s.by_type.updated_fact.newer_first)} |`);
  if (r.attribution.length > 0) {
    lines.push('', '## Which tier produced the evidence in the top 8', '');
    lines.push('| system | evidence in top 8 | reported as long_term | as semantic | as short_term | found by long_term | by semantic |');
    lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const a of r.attribution) {
      lines.push(
        `| ${a.system} | ${a.evidence_in_top8} / ${a.evidence_total} | ${a.reported_by.long_term} | ${a.reported_by.semantic} | ${a.reported_by.short_term} | ${a.found_by.long_term} | ${a.found_by.semantic} |`,
      );
    }
  }
  if (r.importance) {
    const i = r.importance;
    lines.push('', '## Evidence kept out of the long-term tier by importance scoring', '');
    lines.push(
      `${i.dropped} of ${i.evidence_turns} evidence turns scored below importance_threshold ${i.threshold} (by question type: ` +
        `${QUESTION_TYPES.map((t) => `${t} ${i.dropped_by_type[t]}`).join(', ')}). They stay reachable through the semantic tier and as neighbours of a hit.`,
    );
  }
  if (r.acceptance) {
    const a = r.acceptance;
    lines.push('', '## Acceptance', '');
    lines.push(
      `${a.system}: Recall@8 ${f(a.recall8)} vs ${a.baseline} ${f(a.baseline_recall8)}, margin ${a.margin >= 0 ? '+' : ''}${a.margin.toFixed(3)} (needs ≥ +0.100); ` +
        `not below the baseline on: ${QUESTION_TYPES.map((t) => `${t} ${a.per_type[t].ok ? 'yes' : 'NO'}`).join(', ')}. **${a.passed ? 'passed' : 'not passed'}**.`,
    );
  }
  lines.push('', '## Runs', '');
  for (const run of r.runs) {
    lines.push(
      `- ${run.label} (${run.embedder}): ingest ${run.ingest_s} s, ${run.query_ms_per_question} ms per question (two passes and two single-tier queries), ` +
        `stored: ${run.stored.turn_log} turns, ${run.stored.long_term} long-term entries, ${run.stored.vectors} vectors; tier passes skipped: ${run.skipped_tiers}`,
    );
  }
  for (const u of r.unavailable) lines.push(`- ${u.label}: not available (${u.reason})`);
  lines.push('', '## Question types', '');
  for (const t of QUESTION_TYPES) lines.push(`- **${t}**: ${r.question_types[t]}`);
  lines.push(
    '',
    'R@k: share of a question\'s evidence turns in the first k results; H@k: at least one in the first k; MRR over the first 20. ' +
      'The combined pass is asked with top_k 8 for k ≤ 8 (as the chat pipeline asks) and with top_k 20 for k = 20.',
    '',
  );
  return lines.join('\n');
}
