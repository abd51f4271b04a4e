// The retrieval-quality evaluation: `npm run eval [-- --seed N] [-- --users N] [-- --embedders hash,tiny]`,
// or on real conversations: `npm run eval -- --locomo FILE [--roles both-user|b-assistant] [--no-ablation] [--no-captions]` (eval/locomo/),
// `npm run eval -- --realmem DIR [--no-ablation]` (eval/realmem/); every figure at once: `npm run eval -- --all
// [--data DIR] [--no-ablation]` (eval/all.ts).
// Generates the conversation set, runs the service once per offline embedder and the keyword baselines,
// prints the tables and writes eval/out/results.{json,md}. Either form takes `--database-url URL` (or
// NEURALCLEAVE_DATABASE_URL): the service then runs on a scratch database of that PostgreSQL server
// instead of a temp SQLite file (eval/store.ts).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../src/config/schema.js';
import { baselineRankings } from './baselines.js';
import { DEFAULT_DATASET, generateDataset } from './dataset.js';
import { buildResults, renderMarkdown } from './report.js';
import { SIGNALS, type Signal } from '../src/retrieval/rank.js';
import { ROLE_CONVENTIONS, type RoleConvention } from './locomo/dataset.js';
import { runLocomo } from './locomo/run.js';
import { runRealmem } from './realmem/run.js';
import { runAll } from './all.js';
import { runService, type EmbedderChoice, type ServiceOutcome } from './service-run.js';
import { databaseUrlArg } from './store.js';
import { redactUrl } from '../src/adapters/postgres/pool.js';

interface Args {
  locomo: string | undefined;
  realmem: string | undefined;
  all: boolean;
  data: string;
  roles: RoleConvention;
  sample: number;
  signals: Signal[] | undefined;
  ablation: boolean;
  captions: boolean;
  seed: number;
  users: number;
  embedders: string[];
  out: string;
  databaseUrl: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (name: string, fallback: number) => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} takes a positive integer, got "${v}"`);
    return n;
  };
  return {
    locomo: value('locomo'),
    realmem: value('realmem'),
    all: argv.includes('--all'),
    data: value('data') ?? join(repoRoot(), '..', 'shared', 'data'),
    roles: roleConvention(value('roles') ?? 'both-user'),
    sample: int('sample', 1),
    signals: value('signals')?.split(',').map(signalArg),
    ablation: !argv.includes('--no-ablation'),
    captions: !argv.includes('--no-captions'),
    seed: int('seed', DEFAULT_DATASET.seed),
    users: int('users', DEFAULT_DATASET.users),
    embedders: (value('embedders') ?? 'hash,tiny').split(',').filter(Boolean),
    out: value('out') ?? join(repoRoot(), 'eval', 'out'),
    databaseUrl: argv.includes('--database-url')
      ? (databaseUrlArg(value('database-url'), '--database-url') ?? usage('--database-url takes a postgres:// URL'))
      : databaseUrlArg(process.env.NEURALCLEAVE_DATABASE_URL, 'NEURALCLEAVE_DATABASE_URL'),
  };
}

function signalArg(v: string): Signal {
  if (!(SIGNALS as readonly string[]).includes(v)) throw new Error(`--signals takes some of ${SIGNALS.join(', ')}, got "${v}"`);
  return v as Signal;
}

function roleConvention(v: string): RoleConvention {
  if (!(ROLE_CONVENTIONS as readonly string[]).includes(v)) throw new Error(`--roles takes ${ROLE_CONVENTIONS.join(' or ')}, got "${v}"`);
  return v as RoleConvention;
}

function usage(message: string): never {
  throw new Error(message);
}

/** The checkout's root, whether this runs from eval/ (tsx) or dist/eval/ (compiled). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith(`${'/'}dist`)) {
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

/**
 * The tiny transformers model of the test fixtures, generated on the spot: random weights, so it shows
 * the model path works end to end, not what a trained model would score.
 */
async function tinyModel(dir: string): Promise<EmbedderChoice | { label: string; reason: string }> {
  const fixture = '../test/fixtures/tiny-model.js';
  try {
    const mod = (await import(fixture)) as { writeTinyModel: (d: string, o: { modelId: string; hidden: number }) => string };
    const modelId = mod.writeTinyModel(dir, { modelId: 'eval/tiny-bert', hidden: 128 });
    return { label: 'tiny-model', config: { embedding_model: modelId, model_dir: dir } };
  } catch (err) {
    return { label: 'tiny-model', reason: `fixture test/fixtures/tiny-model.ts unavailable: ${(err as Error).message}` };
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.all) return runAll({ data: args.data, out: args.out, ablation: args.ablation, databaseUrl: args.databaseUrl });
  if (args.realmem !== undefined) return runRealmem(args.realmem, { out: args.out, ablation: args.ablation, sample: args.sample, signals: args.signals, databaseUrl: args.databaseUrl });
  if (args.locomo !== undefined) return runLocomo(args.locomo, { out: args.out, ablation: args.ablation, captions: args.captions, roles: args.roles, signals: args.signals, databaseUrl: args.databaseUrl });
  const log = (m: string) => process.stderr.write(`${m}\n`);
  if (args.databaseUrl) log(`store: a scratch database on the PostgreSQL server of ${redactUrl(args.databaseUrl)}`);
  const started = performance.now();
  const dataset = generateDataset({ seed: args.seed, users: args.users });
  log(`dataset: ${dataset.users.length} users, ${dataset.turns.length} turns, ${dataset.questions.length} questions (seed ${args.seed})`);

  const modelDir = mkdtempSync(join(tmpdir(), 'nc-eval-models-'));
  const outcomes: ServiceOutcome[] = [];
  try {
    for (const name of args.embedders) {
      const choice: EmbedderChoice | { label: string; reason: string } =
        name === 'hash' ? { label: 'hash', config: { embedding_model: 'hash' } } : name === 'tiny' ? await tinyModel(modelDir) : { label: name, config: { embedding_model: name } };
      if ('reason' in choice) {
        outcomes.push({ label: choice.label, available: false, reason: choice.reason });
        continue;
      }
      log(`running the service with the ${choice.label} embedder…`);
      outcomes.push(await runService(dataset, choice, { onProgress: log, databaseUrl: args.databaseUrl }));
    }
  } finally {
    rmSync(modelDir, { recursive: true, force: true });
  }
  const threshold = ConfigSchema.parse({}).importance_threshold;
  const results = buildResults(dataset, outcomes, baselineRankings(dataset.turns, dataset.questions), threshold);
  const markdown = renderMarkdown(results);
  mkdirSync(args.out, { recursive: true });
  writeFileSync(join(args.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(args.out, 'results.md'), markdown);
  process.stdout.write(`${markdown}\n`);
  log(`written ${resolve(args.out, 'results.json')} and results.md in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  process.stderr.write(`eval failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
