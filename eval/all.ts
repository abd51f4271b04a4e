// Every quality figure in one run: `npm run eval -- --all [--data DIR]`. The generated set (hash
// embedder), LoCoMo dev with both role conventions (speaker_b sent as `assistant`, and both speakers as
// `user`) and RealMem dev (as is, every turn sent as the user's, and asked under the held-out protocol of
// issue 24: see eval/realmem/run.ts), each beside its keyword baseline; LoCoMo and RealMem asked at top_k
// 20 and also at the default top_k (what a client that does not set it gets), with the ablation (each signal
// switched off in turn) on LoCoMo and RealMem. Prints one table and writes eval/out/all.json. The datasets are read
// from where they lie (DIR/locomo-dev.json, DIR/realmem-dev/; default ../shared/data beside the checkout).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigSchema } from '../src/config/schema.js';
import { SIGNALS, type Signal } from '../src/retrieval/rank.js';
import { DEFAULT_TOP_K } from '../src/retrieval/request.js';
import { baselineRankings } from './baselines.js';
import { DEFAULT_DATASET, QUESTION_TYPES, generateDataset } from './dataset.js';
import { BASELINES as LOCOMO_BASELINES, COMBINED as LOCOMO_COMBINED, COMBINED_DEFAULT_K as LOCOMO_COMBINED_DEFAULT_K, evaluateLocomo, type LocomoResult } from './locomo/run.js';
import { round } from './metrics.js';
import { BM25 as REALMEM_BM25, BM25_UNFILTERED, COMBINED as REALMEM_COMBINED, COMBINED_DEFAULT_K as REALMEM_COMBINED_DEFAULT_K, COMBINED_UNFILTERED, evaluateRealmem, type RealmemResult } from './realmem/run.js';
import { BM25_BASELINE, buildResults, type Results } from './report.js';
import { runService } from './service-run.js';

export interface AllOptions {
  data: string;
  out: string;
  ablation: boolean;
  databaseUrl?: string;
}

/** One row of the summary table: a dataset's headline figure for the service and its baseline. */
interface Row {
  dataset: string;
  metric: string;
  service: number;
  baseline: number;
  baseline_name: string;
  /** the figure per category (question type), service and baseline */
  categories: Record<string, { service: number; baseline: number }>;
}

/** What switching each signal off changes on each dataset's headline figure (negative: the signal earns). */
type Ablation = Record<string, Record<string, number>>;

async function generated(o: AllOptions, log: (m: string) => void): Promise<Results> {
  const dataset = generateDataset(DEFAULT_DATASET);
  log(`generated: ${dataset.users.length} users, ${dataset.turns.length} turns, ${dataset.questions.length} questions`);
  const outcome = await runService(dataset, { label: 'hash', config: { embedding_model: 'hash' } }, { onProgress: log, databaseUrl: o.databaseUrl });
  return buildResults(dataset, [outcome], baselineRankings(dataset.turns, dataset.questions), ConfigSchema.parse({}).importance_threshold);
}

function generatedRow(r: Results): Row {
  const service = r.systems.find((s) => s.name === 'combined (hash)');
  const bm25 = r.systems.find((s) => s.name === BM25_BASELINE);
  if (!service || !bm25) throw new Error('the generated run has no combined (hash) or BM25 figures');
  return {
    dataset: 'generated',
    metric: 'R@8',
    service: service.overall.recall[8],
    baseline: bm25.overall.recall[8],
    baseline_name: 'BM25 over all turns',
    categories: Object.fromEntries(QUESTION_TYPES.map((t) => [t, { service: service.by_type[t].recall[8], baseline: bm25.by_type[t].recall[8] }])),
  };
}

function locomoRow(name: string, r: LocomoResult, service = LOCOMO_COMBINED): Row {
  const c = r.systems[service]!;
  const b = r.systems[LOCOMO_BASELINES.said]!;
  return {
    dataset: name,
    metric: 'R@8',
    service: c.overall['recall@8']!,
    baseline: b.overall['recall@8']!,
    baseline_name: LOCOMO_BASELINES.said,
    categories: Object.fromEntries(Object.keys(c.categories).map((k) => [k, { service: c.categories[k]!['recall@8']!, baseline: b.categories[k]!['recall@8']! }])),
  };
}

/** a RealMem run's figures under one protocol: the service's and BM25's systems of that protocol */
function realmemRow(name: string, r: RealmemResult, service = REALMEM_COMBINED, baseline = REALMEM_BM25): Row {
  const c = r.systems[service]!;
  const b = r.systems[baseline]!;
  return {
    dataset: name,
    metric: 'session R@8',
    service: c.overall['recall@8']!,
    baseline: b.overall['recall@8']!,
    baseline_name: baseline,
    categories: Object.fromEntries(Object.keys(c.categories).map((k) => [k, { service: c.categories[k]!['recall@8']!, baseline: b.categories[k]!['recall@8']! }])),
  };
}

const f = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;

export function renderAll(rows: readonly Row[], ablation: Ablation): string {
  const lines = ['| dataset | metric | service (hash) | baseline | Δ | per category: service / baseline |', '| --- | --- | ---: | ---: | ---: | --- |'];
  for (const r of rows) {
    const cats = Object.entries(r.categories)
      .map(([c, v]) => `${c} ${f(v.service)} / ${f(v.baseline)}`)
      .join('; ');
    lines.push(`| ${r.dataset} | ${r.metric} | ${f(r.service)} | ${f(r.baseline)} (${r.baseline_name}) | ${signed(r.service - r.baseline)} | ${cats} |`);
  }
  const datasets = [...new Set(Object.values(ablation).flatMap((a) => Object.keys(a)))];
  if (datasets.length > 0) {
    lines.push('', `| signal switched off: Δ of | ${datasets.join(' | ')} |`, `| --- | ${datasets.map(() => '---:').join(' | ')} |`);
    for (const [signal, d] of Object.entries(ablation)) lines.push(`| ${signal} | ${datasets.map((x) => (d[x] === undefined ? '–' : signed(d[x]!))).join(' | ')} |`);
  }
  return lines.join('\n');
}

export async function runAll(o: AllOptions): Promise<void> {
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const started = performance.now();
  const locomoFile = join(o.data, 'locomo-dev.json');
  const realmemDir = join(o.data, 'realmem-dev');
  for (const p of [locomoFile, realmemDir]) if (!existsSync(p)) throw new Error(`${p} not found: --all reads locomo-dev.json and realmem-dev/ from --data DIR (default ../shared/data)`);
  const ablate: readonly Signal[] = o.ablation ? SIGNALS : [];

  const gen = await generated(o, log);
  const locomoB = await evaluateLocomo(locomoFile, { roles: 'b-assistant', captions: true, ablate, databaseUrl: o.databaseUrl, progress: log });
  const locomoU = await evaluateLocomo(locomoFile, { roles: 'both-user', captions: true, ablate: [], databaseUrl: o.databaseUrl, progress: log });
  const realmem = await evaluateRealmem(realmemDir, { ablate, databaseUrl: o.databaseUrl, progress: log });
  const realmemU = await evaluateRealmem(realmemDir, { ablate: [], roles: 'both-user', databaseUrl: o.databaseUrl, progress: log });

  const rows = [
    generatedRow(gen),
    locomoRow('LoCoMo dev, speaker_b as assistant', locomoB),
    locomoRow('LoCoMo dev, both as user', locomoU),
    realmemRow('RealMem dev', realmem),
    realmemRow('RealMem dev, every turn as user', realmemU),
    locomoRow(`LoCoMo dev, speaker_b as assistant, asked at the default top_k ${DEFAULT_TOP_K}`, locomoB, LOCOMO_COMBINED_DEFAULT_K),
    realmemRow(`RealMem dev, asked at the default top_k ${DEFAULT_TOP_K}`, realmem, REALMEM_COMBINED_DEFAULT_K),
    realmemRow('RealMem dev, asked unfiltered (the held-out protocol of issue 24)', realmem, COMBINED_UNFILTERED, BM25_UNFILTERED),
  ];
  const ablation: Ablation = {};
  for (const signal of ablate) {
    const lb = locomoB.ablation[signal];
    const rm = realmem.ablation[signal];
    ablation[signal] = {
      ...(lb ? { 'LoCoMo R@8': round(lb.overall['recall@8']! - rows[1]!.service) } : {}),
      ...(rm ? { 'RealMem R@8': round(rm.overall['recall@8']! - rows[3]!.service) } : {}),
    };
  }
  const table = renderAll(rows, ablation);
  const { rankings: _l, ...locomoBOut } = locomoB;
  const { rankings: _u, ...locomoUOut } = locomoU;
  const { rankings: _r, ...realmemOut } = realmem;
  const { rankings: _ru, ...realmemUOut } = realmemU;
  const result = {
    generated_at: new Date().toISOString(),
    data: resolve(o.data),
    seconds: round((performance.now() - started) / 1000, 1),
    summary: rows,
    ablation,
    generated: gen,
    locomo_b_assistant: locomoBOut,
    locomo_both_user: locomoUOut,
    realmem: realmemOut,
    realmem_both_user: realmemUOut,
  };
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, 'all.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${table}\n`);
  log(`written ${resolve(o.out, 'all.json')} in ${result.seconds} s`);
}
