// Retrieves whose words hold many pieces (hyphens, apostrophes, underscores) against turns made of
// those pieces: what FTS5 does with such a word is the cost (src/adapters/sqlite/long-term.ts,
// wordMatcher). One user of `--turns` turns of 32,000 characters, each a random chain of `--pieces`
// distinct short pieces joined by hyphens; then, timed in process (median of 3 after one warm-up):
// 32 words of two to eight of those pieces, 32 words of two, one word of 2,000 pieces (`a-a-…`
// against a turn of the same) and the pieces as plain words (for scale).
//   node dist/bench/profile-pieces.js [--turns 1000] [--pieces 8]
// The store is a temporary file, removed at the end. docs/bench-report.md, round 24.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../test/fixtures/random.js';
import { benchServices } from './sections/http.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const turns = opt('turns', 1000);
const pool = opt('pieces', 8);
const CHARS = 32_000;
const rnd = mulberry32(24);
const piece = (i: number) => `p${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}x`;
const anyPiece = () => piece(Math.floor(rnd() * pool));
const chain = (n: number) => Array.from({ length: n }, anyPiece).join('-');

/** 32 distinct words of `size()` pieces (fewer when the pool has fewer) */
function words(size: () => number): string {
  const out = new Set<string>();
  for (let tries = 0; out.size < 32 && tries < 10_000; tries++) out.add(chain(size()));
  return [...out].join(' ');
}

const dir = mkdtempSync(join(tmpdir(), 'nc-profile-pieces-'));
try {
  const { memory } = await benchServices(dir);
  for (let i = 0; i < turns; i += 50) {
    const batch = Array.from({ length: Math.min(50, turns - i) }, (_, j) => {
      let content = '';
      while (content.length < CHARS - 10) content += `${anyPiece()}-`;
      return { user_id: 'u', session_id: `s${(i + j) % 10}`, role: 'assistant' as const, content };
    });
    await memory.addTurns(batch);
  }
  await memory.addTurns([{ user_id: 'u', session_id: 'chain', role: 'assistant', content: 'a-'.repeat(CHARS / 2) }]);
  await memory.idle();
  const queries: Record<string, string> = {
    '32 words of 2-8 pieces': words(() => 2 + Math.floor(rnd() * 7)),
    '32 words of 2 pieces': words(() => 2),
    'one word of 2,000 pieces (a-a-...)': 'a-'.repeat(2000),
    'the pieces as plain words': Array.from({ length: Math.min(32, pool) }, (_, i) => piece(i)).join(' '),
  };
  process.stdout.write(`one user, ${turns} turns of ${CHARS.toLocaleString('en-US')} characters made of ${pool} pieces\n`);
  for (const [name, query] of Object.entries(queries)) {
    const ms: number[] = [];
    for (let r = 0; r < 4; r++) {
      const t = performance.now();
      await memory.retrieve({ user_id: 'u', query: query.slice(0, 4000), top_k: 8 });
      if (r > 0) ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    process.stdout.write(`  ${name}: ${ms[1]!.toFixed(0)} ms a retrieve (median of 3)\n`);
  }
  await memory.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
