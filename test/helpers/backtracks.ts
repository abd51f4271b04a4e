import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The regular expressions that backtracked more than `limit` times in one match attempt while `body`
 * ran, by their source. A deterministic measure of a regex's work, where a timing would depend on the
 * machine: V8 counts the backtracks of each attempt and, with these flags, hands one that goes past the
 * limit to its breadth-first engine and traces it ("Experimental execution … of regexp <source>"). A
 * regex that retries a run from each of its characters (`\s+x` over 4,000 spaces: the attempt at each
 * space backtracks over the rest of the run) is quadratic, and trips a limit well below the run's length;
 * one that reads each character a bounded number of times does not.
 *
 * `body` is the source of an async function body run in a child process (tsx loads the TypeScript),
 * where `src(path)` imports a module of src/ (path relative to src/, ending in .js) and `fixture(path)`
 * one of test/fixtures/.
 */
export function regexOverruns(body: string, limit: number): string[] {
  const srcRoot = new URL('../../src/', import.meta.url).href;
  const fixtures = new URL('../fixtures/', import.meta.url).href;
  const script = `const src = (p) => import(new URL(p, ${JSON.stringify(srcRoot)}).href);\nconst fixture = (p) => import(new URL(p, ${JSON.stringify(fixtures)}).href);\nawait (async () => {\n${body}\n})();\n`;
  const r = spawnSync(
    process.execPath,
    [
      '--enable-experimental-regexp-engine-on-excessive-backtracks',
      `--regexp-backtracks-before-fallback=${limit}`,
      '--trace-experimental-regexp-engine',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ],
    { encoding: 'utf8', cwd: fileURLToPath(new URL('../../', import.meta.url)), maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`the regex probe failed (${r.status}): ${r.stderr}`);
  const sources = new Set<string>();
  for (const line of `${r.stdout}\n${r.stderr}`.split('\n')) {
    const m = /^Experimental execution .* of regexp .*<String\[\d+\]: #(.*)>$/.exec(line);
    if (m) sources.add(m[1]!);
  }
  return [...sources];
}
