import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { mulberry32 } from '../../../fixtures/random.js';
import { tmpDir } from '../../../helpers/tmp.js';

const WORDS = 'harbour locker gate north south parcel dock courier sister lisbon ramen violin puppy garden camera'.split(' ');

/**
 * The unfiltered text search ranks FTS5 matches before reading their rows (`ranked`); it must answer
 * exactly what the joined statement answers — same entries, same order, same scores — for a user
 * who holds nearly every row, one who holds a few, and ties (the same text stored many times).
 */
describe('long-term text search: ranked before the rows are read', () => {
  it('gives the joined statement\'s results, in its order, for big and small users', async () => {
    const db = openDatabase(join(tmpDir(), 'ranked.db'));
    const store = new SqliteLongTermStore(db);
    const rnd = mulberry32(5);
    const entries: MemoryEntry[] = [];
    for (let i = 0; i < 6000; i++) {
      // user "big" holds 5,000 rows (no owner clause for it), the others a few hundred each; texts repeat
      const user = i < 5000 ? 'big' : `small-${i % 7}`;
      const content = Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ');
      const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      entries.push({ id: `e${i}`, user_id: user, session_id: `s${i % 9}`, role: 'user', name: i % 11 === 0 ? 'Dolores' : null, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at });
    }
    store.upsertSync(entries);
    const joined = (store as unknown as { s: { fts: { all(p: object): Array<{ id: string; rank: number }> } } }).s.fts;
    const matchFor = (store as unknown as { matchFor(u: string, q: string, speakers: ReadonlySet<string>): string }).matchFor.bind(store);
    let checked = 0;
    for (const user of ['big', 'small-3', 'nobody']) {
      for (let q = 0; q < 40; q++) {
        const query = Array.from({ length: 1 + (q % 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ') + (q % 5 === 0 ? ' dolores' : '');
        for (const limit of [8, 24]) {
          const got = (await store.searchText(user, query, { limit })).map((h) => [h.entry.id, h.bm25]);
          const match = matchFor(user, query, new Set());
          const want = joined.all({ match, user_id: user, session_id: null, from: null, before: null, limit }).map((r) => [r.id, r.rank]);
          assert.deepEqual(got, want, `${user}: "${query}" (limit ${limit})`);
          checked += want.length;
        }
      }
    }
    assert.ok(checked > 1000, `compared ${checked} results`);
    db.close();
  });
});
