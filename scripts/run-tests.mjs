// Runs the test suites with Node's test runner over the TypeScript sources (through tsx).
// Usage: node scripts/run-tests.mjs [all|unit|integration|contract|faults] [extra files...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SUITES = { unit: ['test/unit'], contract: ['test/contract'], integration: ['test/integration'], faults: ['test/faults'] };
const which = process.argv[2] ?? 'all';
const dirs = which === 'all' ? [...SUITES.unit, ...SUITES.contract, ...SUITES.integration] : SUITES[which];
if (!dirs) {
  console.error(`unknown suite "${which}"; one of all, ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}

function find(dir) {
  let out = [];
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = [...dirs.flatMap(find), ...process.argv.slice(3)];
if (files.length === 0) {
  console.error(`no test files found for "${which}"`);
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// a test that waits for something that never comes fails after 10 minutes instead of stalling the run
const testTimeoutMs = 600_000;
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${testTimeoutMs}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
