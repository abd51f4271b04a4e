import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { mulberry32 } from '../../../fixtures/random.js';
import { tmpDir } from '../../../helpers/tmp.js';

const WORDS = 'harbour locker gate parcel dock courier sister lisbon ramen violin puppy garden camera'.split(' ');
/** ids that share words, repeat a word, hold words the stemmer changes, non-ASCII ones, one with no word */
const USERS = ['user-1', 'user-12', '12-user', 'user-user-3', 'users-4', 'ann.lee@example.com', 'lee.ann@example.com', 'Zoë-1', '東京', '@@--@@'];

/**
 * A small user's text query is narrowed to the owner by the rarest word of its id instead of the whole
 * id as a phrase (every row of a store whose ids look alike holds "user"): the answer must be the
 * phrase's — the same entries, in the same order, with the same bm25 — for any shape of id.
 */
describe('long-term text search: the owner narrowed by the rarest word of its id', () => {
  it('answers exactly what the whole-id phrase answers, and matches on the id\'s rarest word', async () => {
    const db = openDatabase(join(tmpDir(), 'owner.db'));
    try {
      const store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
      const rnd = mulberry32(9);
      const entries: MemoryEntry[] = [];
      for (let i = 0; i < 3000; i++) {
        const user = USERS[i % USERS.length]!;
        const content = Array.from({ length: 3 + Math.floor(rnd() * 5) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ');
        const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
        entries.push({ id: `e${i}`, user_id: user, session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at });
      }
      store.upsertSync(entries);
      const phrase = db.prepare(
        `SELECT e.id, -bm25(entries_fts, 1.0, 2.0, 0.0) AS rank FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid
         WHERE entries_fts MATCH @match AND e.user_id = @user_id ORDER BY bm25(entries_fts, 1.0, 2.0, 0.0), e.id LIMIT @limit`,
      );
      const matchFor = (store as unknown as { matchFor(u: string, q: string, s: ReadonlySet<string>): { match: string } }).matchFor.bind(store);
      // an id of no word has no owner clause at all (the big-user path, long-term-ranked.test.ts)
      for (const user of USERS.filter((u) => /[\p{L}\p{N}]/u.test(u))) {
        for (let q = 0; q < 15; q++) {
          const words = [...new Set(Array.from({ length: 1 + (q % 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!))];
          const got = (await store.searchText(user, words.join(' '), { limit: 8 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
          const want = (phrase.all({ match: `user_id : "${user}" AND (${words.map((w) => `"${w}"`).join(' OR ')})`, user_id: user, limit: 8 }) as Array<{ id: string; rank: number }>).map((r) => [r.id, r.rank.toFixed(9)]);
          // ties at the cut may keep either entry: those above the last score must be the same
          const last = want[want.length - 1]?.[1];
          const key = (xs: string[][]) => xs.filter(([, r]) => r !== last).map(([id, r]) => `${r} ${id}`).sort();
          assert.deepEqual(got.map((h) => h[1]), want.map((h) => h[1]), `${user}: ${words.join(' ')} (scores)`);
          assert.deepEqual(key(got as string[][]), key(want as string[][]), `${user}: ${words.join(' ')}`);
        }
      }
      assert.match(matchFor('user-12', 'ramen', new Set()).match, /^user_id : "12" AND /);
      assert.match(matchFor('user-user-3', 'ramen', new Set()).match, /^user_id : "3" AND /);
      assert.match(matchFor('ann.lee@example.com', 'ramen', new Set()).match, /^user_id : "(ann|lee)" AND /);
      assert.match(matchFor('Zoë-1', 'ramen', new Set()).match, /^user_id : "Zoë-1" AND /, 'a non-ASCII id keeps the phrase');
    } finally {
      db.close();
    }
  });
});
