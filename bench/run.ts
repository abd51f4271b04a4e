// Runs every benchmark section in one process and writes bench/out/report.{md,json}.
// Usage: npm run bench [-- --quick] [-- --only name,name] [-- --realtext-data DIR]
import { Report, type Section } from './report.js';

const SECTIONS: Record<string, () => Promise<{ default: Section }>> = {
  // each section registers itself here: name → module
  ingest: () => import('./sections/ingest.js'),
  retrieve: () => import('./sections/retrieve.js'),
  scale: () => import('./sections/scale.js'),
  embedder: () => import('./sections/embedder.js'),
  http: () => import('./sections/http.js'),
  bullmq: () => import('./sections/bullmq.js'),
  postgres: () => import('./sections/postgres.js'),
  // real conversations (RealMem dev, LoCoMo dev) read from where they lie; skipped without them
  realtext: () => import('./sections/realtext.js'),
  tokens: () => import('./sections/tokens.js'),
  // the postgres section's HTTP rows alone (postgres runs them too)
  'postgres-http': () => import('./sections/postgres-http.js'),
};

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? new Set((args[onlyIdx + 1] ?? '').split(',')) : null;

const report = new Report();
for (const [name, load] of Object.entries(SECTIONS)) {
  if (only ? !only.has(name) : name === 'postgres-http') continue;
  process.stdout.write(`\n== ${name} ==\n`);
  const section = (await load()).default;
  await section(report, { quick });
}
report.write(new URL('./out/', import.meta.url).pathname.replace('/dist/bench/out/', '/bench/out/'));
process.stdout.write('\nreport written to bench/out/report.md\n');
