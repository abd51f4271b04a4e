import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { tmpDir } from '../../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** A program built on the client, as a user of the package writes it; each marked line uses one schema field. */
const CONSUMER = `import { MemoryClient, NotFoundError, type RetrievalResult, type TurnInput } from 'neuralcleave-memory/client';

const client = new MemoryClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'k', timeoutMs: 5000, retries: 2 });
const turn: TurnInput = { role: 'user', content: 'hello', importance: 0.5 };

export async function main(): Promise<number> {
  const written = await client.addTurns('s1', [turn]);
  const count: number = written.accepted; // FIELD accepted
  const r = await client.retrieve({ query: 'hello', session_id: 's1', top_k: 4 }); // FIELD top_k
  const first: RetrievalResult | undefined = r.results[0];
  const similarity: number | null | undefined = first?.explain.similarity; // FIELD similarity
  const entries = await client.search('hello', { limit: 5 });
  try {
    await client.get(entries[0]?.id ?? 'x');
  } catch (e) {
    if (e instanceof NotFoundError) return e.status;
  }
  return count + (similarity ?? 0);
}
`;

function tsc(project: string): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [TSC, '-p', project], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** A consumer project compiling against the client source under `srcRoot`: browser libs, no @types/node. */
function consumerProject(dir: string, clientEntry: string | null): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    ...(clientEntry ? { paths: { 'neuralcleave-memory/client': [clientEntry] } } : {}),
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
  return dir;
}

/** the line of CONSUMER marked `FIELD name`, 1-based */
const lineOf = (field: string): number => CONSUMER.split('\n').findIndex((l) => l.includes(`// FIELD ${field}`)) + 1;

function replaceOnce(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  assert.equal(text.split(from).length, 2, `exactly one "${from}" in ${file}`);
  writeFileSync(file, text.replace(from, to));
}

describe('the client’s types are the server’s schemas (tsc --noEmit on a consumer)', () => {
  test('the consumer compiles against the client as it is, with browser libs and no Node types', () => {
    const r = tsc(consumerProject(join(tmpDir(), 'consumer'), join(ROOT, 'src', 'client', 'index.ts')));
    assert.equal(r.code, 0, r.out);
  });

  test('renaming a response field, an output field and a request field in the schemas breaks the consumer at those lines', () => {
    const copy = tmpDir();
    cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    // the schema files the server validates with, changed as a later version might change them
    replaceOnce(join(copy, 'src', 'api', 'schemas.ts'), "accepted: z.number().int().describe('turns stored now')", "stored: z.number().int().describe('turns stored now')");
    replaceOnce(join(copy, 'src', 'domain', 'entry.ts'), '  similarity: z.number().nullable(),', '  cosine: z.number().nullable(),');
    replaceOnce(join(copy, 'src', 'retrieval', 'request.ts'), '  top_k: z.number()', '  limit: z.number()');

    const r = tsc(consumerProject(join(copy, 'consumer'), join(copy, 'src', 'client', 'index.ts')));
    assert.notEqual(r.code, 0, 'the build must fail');
    const lines = new Set([...r.out.matchAll(/consumer\.ts\((\d+),\d+\): error/g)].map((m) => Number(m[1])));
    assert.deepEqual([...lines].sort((a, b) => a - b), [lineOf('accepted'), lineOf('top_k'), lineOf('similarity')], r.out);
    assert.match(r.out, /Property 'accepted' does not exist/);
    assert.match(r.out, /Property 'similarity' does not exist/);
    assert.match(r.out, /'top_k' does not exist in type/);
  });

  test('the package export resolves: `neuralcleave-memory/client` of the built package type-checks the same consumer', (t) => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'client', 'index.d.ts'))) return t.skip('dist/ is not built (npm test builds it)');
    const dir = consumerProject(join(tmpDir(), 'pkg-consumer'), null);
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'neuralcleave-memory'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    const r = tsc(dir);
    assert.equal(r.code, 0, r.out);
  });
});
