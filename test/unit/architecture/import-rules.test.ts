import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { tmpDir } from '../../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

/** A tiny project laid out like this one, its files given as path → source. */
function project(files: Record<string, string>): string {
  const dir = tmpDir();
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src', 'queues', 'workers'] }));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

/** The rule names depcruise reports against the project's configuration, one per violation. */
function violations(dir: string): string[] {
  const folders = ['src', 'queues', 'workers'].filter((f) => existsSync(join(dir, f)));
  const r = spawnSync(DEPCRUISE, ['--config', CONFIG, '--output-type', 'json', ...folders], { cwd: dir, encoding: 'utf8' });
  assert.ok(r.stdout, `depcruise printed nothing: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> } };
  return out.summary.violations.map((v) => `${v.rule.name} ${v.from} -> ${v.to}`).sort();
}

/**
 * The guard rails of `npm run check:cycles` (docs/architecture.md, layers and folders) on fixtures:
 * each rule reports what it must, and a project that keeps the rules gets no violation.
 */
describe('import rules (.dependency-cruiser.cjs)', () => {
  it('reports an import cycle, even through type-only imports', () => {
    const dir = project({
      'src/chat/a.ts': "import type { B } from './b.js';\nexport type A = { b?: B };\n",
      'src/chat/b.ts': "import type { A } from './a.js';\nexport type B = { a?: A };\n",
    });
    const found = violations(dir);
    assert.ok(found.some((v) => v.startsWith('no-cycles src/chat/a.ts')), found.join('\n'));
  });

  it('reports inner layers importing adapters or roots, queues importing src/ beyond domain and ports, and workers imported outside the roots', () => {
    const dir = project({
      'src/domain/turn.ts': "import { x } from '../adapters/sqlite/db.js';\nexport const t = x;\n",
      'src/adapters/sqlite/db.ts': 'export const x = 1;\n',
      'src/memory/forget.ts': "import { wire } from '../roots/library.js';\nexport const f = wire;\n",
      'src/roots/library.ts': "import { p } from '../../workers/embed.js';\nexport const wire = p;\n",
      'queues/payloads.ts': "import { h } from '../src/retrieval/rank.js';\nexport const q = h;\n",
      'src/retrieval/rank.ts': 'export const h = 2;\n',
      'workers/embed.ts': "import { x } from '../src/adapters/sqlite/db.js';\nexport const p = x;\n",
      'src/api/metrics.ts': "import { p } from '../../workers/embed.js';\nexport const m = p;\n",
    });
    assert.deepEqual(violations(dir), [
      'inner-layers-no-adapters src/domain/turn.ts -> src/adapters/sqlite/db.ts',
      'inner-layers-no-adapters workers/embed.ts -> src/adapters/sqlite/db.ts',
      'inner-layers-no-roots src/memory/forget.ts -> src/roots/library.ts',
      'queues-only-domain-and-ports queues/payloads.ts -> src/retrieval/rank.ts',
      'workers-only-from-roots src/api/metrics.ts -> workers/embed.ts',
    ]);
  });

  it('reports nothing for a project that keeps the rules', () => {
    const dir = project({
      'src/domain/turn.ts': 'export const t = 1;\n',
      'src/ports/turn-log.ts': "import type { t } from '../domain/turn.js';\nexport type TurnLog = { get(): typeof t };\n",
      'queues/payloads.ts': "import { t } from '../src/domain/turn.js';\nexport const q = t;\n",
      'workers/embed.ts': "import { q } from '../queues/payloads.js';\nexport const p = q;\n",
      'src/adapters/sqlite/db.ts': "import type { TurnLog } from '../../ports/turn-log.js';\nexport const x: TurnLog | null = null;\n",
      'src/roots/library.ts': "import { p } from '../../workers/embed.js';\nimport { x } from '../adapters/sqlite/db.js';\nexport const wire = [p, x];\n",
      'src/cli/main.ts': "import { wire } from '../roots/library.js';\nexport const m = wire;\n",
    });
    assert.deepEqual(violations(dir), []);
  });
});
