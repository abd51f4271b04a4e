import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { CachedBm25 } from '../../../../src/adapters/sqlite/bm25.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { mulberry32 } from '../../../fixtures/random.js';
import { tmpDir } from '../../../helpers/tmp.js';

// words the porter stemmer folds together (run/runs/running), one that is in every owner id (user),
// and a name that is also said in texts (ann)
const WORDS = 'harbour locker gate parcel run runs running ramen violin puppy garden camera user ann'.split(' ');
const USERS = ['user-1', 'user-12', '12-user', 'user-user-3', 'team-12'];
const NAMES = [null, 'Ann', 'Bob', 'Ann Lee'];

function fill(db: Db, n: number, seed: number, from = 0): SqliteLongTermStore {
  const store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
  const rnd = mulberry32(seed);
  const entries: MemoryEntry[] = [];
  for (let i = from; i < from + n; i++) {
    // lengths from 1 to 14 words, words repeated within a text
    const content = Array.from({ length: 1 + Math.floor(rnd() * 14) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ');
    const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
    entries.push({ id: `e${i}`, user_id: USERS[i % USERS.length]!, session_id: 's', role: 'user', name: NAMES[i % NAMES.length]!, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at });
  }
  store.upsertSync(entries);
  return store;
}

/** every matching row's -bm25(entries_fts, 1.0, 2.0, 0.0), as FTS5 computes it */
function bm25Of(db: Db, match: string): Map<number, number> {
  const rows = db.prepare('SELECT rowid, -bm25(entries_fts, 1.0, 2.0, 0.0) FROM entries_fts WHERE entries_fts MATCH ?').raw().all(match) as Array<[number, number]>;
  return new Map(rows);
}

const queries = (rnd: () => number) =>
  Array.from({ length: 40 }, (_, q) => {
    const words = [...new Set(Array.from({ length: 1 + (q % 4) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!))];
    const phrases = words.map((w, i) => (q % 3 === 0 && i === 0 ? `name : "${w}"` : `"${w}"`));
    // a word of no row (as most joined compounds are) scores nothing
    return q % 5 === 0 ? [...phrases, '"harbourgate"'] : phrases;
  });

/**
 * FTS5's bm25() counts each query word's rows of every user per query; CachedBm25 keeps those counts
 * while nothing is written and must score every row exactly as bm25() does (same number, not close).
 */
describe('long-term text search: BM25 with the collection statistics cached', () => {
  it('scores every matching row exactly as bm25() does', () => {
    const db = openDatabase(join(tmpDir(), 'bm25.db'));
    try {
      fill(db, 2000, 3);
      const bm25 = new CachedBm25(db);
      assert.equal(bm25.score('user_id : "12"', ['"ramen"']), null, 'the first call reads the table\'s state');
      const rnd = mulberry32(4);
      let rows = 0;
      for (const owner of ['user_id : "12"', 'user_id : "1"', 'user_id : "3"', 'user_id : "team"', 'user_id : "user"']) {
        for (const phrases of queries(rnd)) {
          const got = new Map(bm25.score(owner, phrases)!);
          const want = bm25Of(db, `${owner} AND (${phrases.join(' OR ')})`);
          assert.deepEqual(got, want, `${owner} AND (${phrases.join(' OR ')})`);
          rows += want.size;
        }
      }
      assert.ok(rows > 1000, `compared ${rows} rows`);
    } finally {
      db.close();
    }
  });

  it('is refreshed by a write on its connection or another one', () => {
    const dir = tmpDir();
    const db = openDatabase(join(dir, 'bm25-writes.db'));
    const other = openDatabase(join(dir, 'bm25-writes.db'));
    try {
      fill(db, 500, 5);
      const bm25 = new CachedBm25(db);
      const match = ['"violin"', '"puppy"'];
      const owner = 'user_id : "12"';
      bm25.score(owner, match);
      const before = bm25.score(owner, match)!;
      assert.deepEqual(new Map(before), bm25Of(db, `${owner} AND (${match.join(' OR ')})`));
      for (const [writer, from] of [[db, 1000], [other, 2000]] as const) {
        // more rows holding "violin": its IDF falls, so every score of it moves
        fill(writer, 300, from, from);
        assert.equal(bm25.score(owner, match), null, 'the write made the statistics stale');
        const after = new Map(bm25.score(owner, match)!);
        const want = bm25Of(db, `${owner} AND (${match.join(' OR ')})`);
        assert.deepEqual(after, want);
        assert.notDeepEqual(after, new Map(before));
      }
      // rows written and rolled back change no counter: inside a transaction bm25() answers
      const now = new Map(bm25.score(owner, match)!);
      assert.throws(() => db.transaction(() => {
        fill(db, 300, 3000, 3000);
        for (let i = 0; i < 2; i++) assert.equal(bm25.score(owner, match), null, 'no cached statistics inside a transaction');
        throw new Error('rolled back');
      })(), /rolled back/);
      const back = bm25.score(owner, match) ?? bm25.score(owner, match);
      assert.deepEqual(new Map(back!), now);
      assert.deepEqual(now, bm25Of(db, `${owner} AND (${match.join(' OR ')})`));
    } finally {
      other.close();
      db.close();
    }
  });

  it('gives a small user\'s search the joined bm25() statement\'s entries, order and scores', async () => {
    const db = openDatabase(join(tmpDir(), 'bm25-store.db'));
    try {
      const store = fill(db, 2000, 7);
      const cached = (store as unknown as { bm25: CachedBm25 }).bm25;
      let answered = 0;
      const score = cached.score.bind(cached);
      cached.score = (o, p) => {
        const out = score(o, p);
        if (out) answered++;
        return out;
      };
      const joined = db.prepare(
        `SELECT e.id, -bm25(entries_fts, 1.0, 2.0, 0.0) AS rank FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid
         WHERE entries_fts MATCH @match AND e.user_id = @user_id ORDER BY bm25(entries_fts, 1.0, 2.0, 0.0), e.rowid LIMIT @limit`,
      );
      const rnd = mulberry32(8);
      for (const user of USERS) {
        for (let q = 0; q < 20; q++) {
          const words = [...new Set(Array.from({ length: 1 + (q % 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!))];
          const speakers = q % 4 === 0 ? [words[0]!] : [];
          const phrases = words.map((w) => (speakers.includes(w) ? `name : "${w}"` : `"${w}"`));
          const got = store.searchTextSync(user, words.join(' '), { limit: 8, speakerTerms: speakers }).map((h) => [h.entry.id, h.bm25]);
          const want = (joined.all({ match: `user_id : "${user}" AND (${phrases.join(' OR ')})`, user_id: user, limit: 8 }) as Array<{ id: string; rank: number }>).map((r) => [r.id, r.rank]);
          assert.deepEqual(got, want, `${user}: ${phrases.join(' ')}`);
        }
      }
      assert.ok(answered >= USERS.length * 20 - 1, `the cached statistics answered ${answered} searches`);
    } finally {
      db.close();
    }
  });
});
