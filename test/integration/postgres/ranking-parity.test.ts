// The long-term tier ranks alike on both engines: the same entries in an SQLite file (FTS5 bm25) and in
// a PostgreSQL database (BM25 computed in SQL, each user's own statistics), searched with the same
// queries. Where the two differ is statistics (FTS5's are the whole table's), tokenisation and
// stemming; what they must agree on is what BM25 decides — and on the eval's questions, about as many
// evidence turns found (the acceptance: Recall@8 within 0.02 of SQLite).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateDataset } from '../../../eval/dataset.js';
import { Rand } from '../../../eval/random.js';
import { openDatabase } from '../../../src/adapters/sqlite/db.js';
import { LONG_ROW_TOKENS } from '../../../src/adapters/sqlite/repeats.js';
import { SqliteLongTermStore } from '../../../src/adapters/sqlite/long-term.js';
import { PostgresLongTermStore } from '../../../src/adapters/postgres/long-term.js';
import type { Postgres } from '../../../src/adapters/postgres/pool.js';
import type { MemoryEntry } from '../../../src/domain/entry.js';
import { contentHash } from '../../../src/domain/hash.js';
import type { LongTermStore } from '../../../src/ports/long-term.js';
import { queryTerms, words } from '../../../src/retrieval/query-terms.js';
import { sharedPostgres } from '../../helpers/postgres.js';
import { tmpDir } from '../../helpers/tmp.js';

const pg = sharedPostgres();

interface Doc {
  id: string;
  user_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  name?: string | null;
  content: string;
  created_at: string;
}

function asEntry(d: Doc): MemoryEntry {
  return {
    id: d.id,
    user_id: d.user_id,
    session_id: d.session_id,
    role: d.role,
    name: d.name ?? null,
    kind: 'turn',
    content: d.content,
    content_hash: contentHash(d.content),
    importance: 0.5,
    pinned: false,
    metadata: null,
    covers: null,
    created_at: d.created_at,
    updated_at: d.created_at,
  };
}

describe('long-term ranking: PostgreSQL beside SQLite', () => {
  let sqlite: SqliteLongTermStore;
  let postgres: PostgresLongTermStore;
  let db: ReturnType<typeof openDatabase>;
  const both = () => [sqlite, postgres] as const;
  const load = async (docs: readonly Doc[]) => {
    const entries = docs.map(asEntry);
    for (let i = 0; i < entries.length; i += 500) for (const s of both()) await s.upsert(entries.slice(i, i + 500));
  };

  before(async () => {
    db = openDatabase(join(tmpDir('nc-parity-'), 'parity.db'));
    sqlite = new SqliteLongTermStore(db);
    postgres = new PostgresLongTermStore((await pg()) as Postgres);
  });
  after(() => db.close());

  it('agrees on what BM25 decides: a rare word over a frequent one, more hits, a shorter entry, a speaker\'s own turn', async () => {
    const u = 'parity-cases';
    const r = new Rand(7);
    const filler = 'morning weather coffee train office lunch walk garden market evening dinner weekend call email plan'.split(' ');
    const at = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString();
    const docs: Doc[] = [];
    const prose = Array.from({ length: LONG_ROW_TOKENS }, (_, i) => filler[(i * 7) % filler.length]).join(' ');
    // background: "harbour" in about one entry of eight, so its idf is small for any statistics (in
    // 15% of the user's entries it would be common, and left out of the search beside "falcon")
    for (let i = 0; i < 160; i++) {
      const body = Array.from({ length: r.int(6, 14) }, () => r.pick(filler));
      if (r.chance(0.12)) body.splice(r.int(0, body.length), 0, 'harbour');
      docs.push({ id: `bg${i}`, user_id: u, session_id: `s${i % 8}`, role: i % 2 ? 'assistant' : 'user', name: i % 2 ? 'Nova' : 'Sam', content: body.join(' '), created_at: at(i) });
    }
    const c = (id: string, content: string, name = 'Sam') => ({ id, user_id: u, session_id: 'cases', role: 'user' as const, name, content, created_at: at(200 + docs.length) });
    docs.push(
      c('rare', 'a falcon circled the lunch market'),
      c('frequent', 'harbour harbour harbour traffic on the harbour'),
      // word frequencies count in long entries (SQLite counts a word once in an entry under
      // LONG_ROW_TOKENS words: src/adapters/sqlite/bm25.ts)
      c('tf3', `otter otter otter swam past the garden ${prose}`),
      c('tf1', `one otter swam past the garden today ${prose}`),
      c('short', 'kestrel nest'),
      c('long', `kestrel ${Array.from({ length: 30 }, (_, i) => filler[i % filler.length]).join(' ')}`),
      c('said', 'the lantern festival starts at dusk', 'Maya'),
      c('mentioned', 'Maya said the lantern festival starts late', 'Leo'),
    );
    await load(docs);
    const cases: Array<{ query: string; first: string; speakerTerms?: string[] }> = [
      { query: 'falcon harbour', first: 'rare' },
      { query: 'otter', first: 'tf3' },
      { query: 'kestrel', first: 'short' },
      { query: 'what did Maya say about the lantern festival', first: 'said', speakerTerms: ['maya'] },
    ];
    for (const k of cases) {
      const [a, b] = await Promise.all(both().map((s) => s.searchText(u, k.query, { limit: 5, speakerTerms: k.speakerTerms })));
      assert.equal(a![0]?.entry.id, k.first, `SQLite, "${k.query}"`);
      assert.equal(b![0]?.entry.id, k.first, `PostgreSQL, "${k.query}"`);
      assert.ok(b![0]!.bm25 > b![1]!.bm25, `PostgreSQL, "${k.query}": the first hit is ahead, not tied`);
    }
  });

  it('finds about as much evidence for the eval\'s questions, mostly in the same results', async () => {
    // the generated eval's first two users: 790 turns, 34 questions (the full set: `npm run eval`)
    const d = generateDataset({ users: 2 });
    await load(d.turns);
    const names = new Map<string, Set<string>>();
    for (const t of d.turns) for (const w of words(t.name ?? '')) names.set(t.user_id, (names.get(t.user_id) ?? new Set()).add(w));
    const K = 8;
    const recall = [0, 0];
    let overlap = 0;
    for (const q of d.questions) {
      const speakerTerms = queryTerms(q.query).filter((w) => names.get(q.user_id)?.has(w));
      const lists = await Promise.all(both().map(async (s: LongTermStore) => (await s.searchText(q.user_id, q.query, { limit: K, speakerTerms })).map((h) => h.entry.id)));
      const evidence = new Set(q.evidence);
      lists.forEach((l, i) => (recall[i]! += l.filter((id) => evidence.has(id)).length / evidence.size));
      const [a, b] = lists as [string[], string[]];
      const inA = new Set(a);
      overlap += Math.max(a.length, b.length) === 0 ? 1 : b.filter((id) => inA.has(id)).length / Math.max(a.length, b.length);
    }
    const n = d.questions.length;
    const [rs, rp] = recall.map((x) => x / n) as [number, number];
    assert.ok(rs > 0.5, `SQLite finds the evidence of most questions (R@${K} ${rs.toFixed(3)})`);
    assert.ok(Math.abs(rp - rs) <= 0.02, `R@${K} PostgreSQL ${rp.toFixed(3)} vs SQLite ${rs.toFixed(3)}`);
    assert.ok(overlap / n >= 0.9, `the top ${K} lists share ${(overlap / n).toFixed(3)} of their results (at least 0.9)`);
  });
});
