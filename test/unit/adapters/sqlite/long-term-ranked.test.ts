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
 * who holds nearly every row, one who holds a few, and ties (the same text stored many times). A big
 * user's query whose words match over 1,000 entries is ranked over the newest 500 matches only
 * (`rankedNewest`): exactly the joined statement's answer over those rows.
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
    const matchFor = (store as unknown as { matchFor(u: string, q: string, speakers: ReadonlySet<string>): { match: string; newest?: boolean } }).matchFor.bind(store);
    // a big user's query matching more than 1,000 entries ranks the newest 500 matches (of any user)
    const windowed = db.prepare(
      `SELECT e.id, -bm25(entries_fts, 1.0, 2.0, 0.0) AS rank FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid
       WHERE entries_fts MATCH @match AND e.user_id = @user_id
         AND entries_fts.rowid >= (SELECT min(rowid) FROM (SELECT rowid FROM entries_fts WHERE entries_fts MATCH @match ORDER BY rowid DESC LIMIT 500))
       ORDER BY bm25(entries_fts, 1.0, 2.0, 0.0), entries_fts.rowid DESC LIMIT @limit`,
    );
    let checked = 0;
    let inWindow = 0;
    for (const user of ['big', 'small-3', 'nobody']) {
      for (let q = 0; q < 40; q++) {
        const query = Array.from({ length: 1 + (q % 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ') + (q % 5 === 0 ? ' dolores' : '');
        for (const limit of [8, 24]) {
          const got = (await store.searchText(user, query, { limit })).map((h) => [h.entry.id, h.bm25]);
          const { match, newest } = matchFor(user, query, new Set());
          const window = newest ? (windowed.all({ match, user_id: user, limit }) as Array<{ id: string; rank: number }>) : [];
          if (window.length === limit) {
            // ties in score may come in another order: same scores, same entries per score
            const key = (xs: Array<[string, number]>) => xs.map(([id, r]) => `${r.toFixed(9)} ${id}`).sort();
            assert.deepEqual(got.map((h) => h[1]), window.map((r) => r.rank), `${user}: "${query}" (limit ${limit}) scores`);
            assert.deepEqual(key(got as Array<[string, number]>), key(window.map((r) => [r.id, r.rank])), `${user}: "${query}" (limit ${limit})`);
            inWindow++;
            checked += limit;
            continue;
          }
          const want = joined.all({ match, user_id: user, session_id: null, from: null, before: null, limit }).map((r) => [r.id, r.rank]);
          assert.deepEqual(got, want, `${user}: "${query}" (limit ${limit})`);
          checked += want.length;
        }
      }
    }
    assert.ok(checked > 1000, `compared ${checked} results`);
    assert.ok(inWindow > 10, `${inWindow} searches ranked the newest matches only`);
    await store.close();
    db.close();
  });
});
