import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { matchesFilter, RetrieveFiltersSchema, type RecordFilter } from '../../../../src/domain/filters.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { LONG_ROW_TOKENS } from '../../../../src/adapters/sqlite/repeats.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { ownedText, ownerPrefix } from '../../../../src/adapters/sqlite/owned-text.js';
import { mulberry32 } from '../../../fixtures/random.js';
import { watchPhraseReads } from '../../../helpers/phrase-reads.js';
import { tmpDir } from '../../../helpers/tmp.js';

const WORDS = 'harbour locker gate parcel dock courier sister lisbon ramen violin puppy garden camera'.split(' ');
/** ids that share words, repeat a word, hold words the stemmer changes, non-ASCII ones, one with no word */
const USERS = ['user-1', 'user-12', '12-user', 'user-user-3', 'users-4', 'ann.lee@example.com', 'lee.ann@example.com', 'Zoë-1', '東京', '@@--@@'];
const NAMES = [null, 'Ann', 'Bob'];

/**
 * BM25 as the store defines it, written out over one user's entries: k1 1.2, b 0.75, idf
 * ln(1 + (N − df + 0.5)/(df + 0.5)) with N and df counted among the user's entries, a row's length
 * the UTF-8 bytes of its content and name over the user's mean, tf a word's hits in the content plus
 * twice its hits in the name (a speaker's word: in the name only) in a row whose content holds
 * LONG_ROW_TOKENS words or more, and in a shorter row the word's weight once (1, a speaker's 2). The
 * filter picks the rows ranked, not the statistics. The user's common words are left out.
 */
function reference(all: readonly MemoryEntry[], user: string, words: readonly string[], speakers: ReadonlySet<string>, filter?: RecordFilter): Array<[string, number]> {
  const mine = all.map((e, rowid) => ({ e, rowid })).filter(({ e }) => e.user_id === user);
  const bytes = (e: MemoryEntry) => Buffer.byteLength(e.content) + Buffer.byteLength(e.name ?? '');
  const avgdl = mine.reduce((n, { e }) => n + bytes(e), 0) / mine.length;
  const hits = (t: string | null, w: string) => (t ?? '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((x) => x === w).length;
  const counted = (e: MemoryEntry, w: string) => (speakers.has(w) ? 0 : hits(e.content, w)) + 2 * hits(e.name, w);
  const long = (e: MemoryEntry) => e.content.split(/[^\p{L}\p{N}]+/u).filter(Boolean).length >= LONG_ROW_TOKENS;
  const tfOf = (e: MemoryEntry, w: string) => (long(e) || counted(e, w) === 0 ? counted(e, w) : speakers.has(w) ? 2 : 1);
  // a content word held by 15% of the user's entries (at least 10, at most 2,000) or more is left
  // out while another word has matches
  const dfOf = (w: string) => mine.filter(({ e }) => tfOf(e, w) > 0).length;
  const common = Math.min(2000, Math.max(10, Math.ceil(0.15 * mine.length)));
  const rarer = words.filter((w) => speakers.has(w) || dfOf(w) < common);
  const scores = new Map<number, number>();
  for (const w of rarer.some((x) => dfOf(x) > 0) ? rarer : words) {
    const holding = mine.filter(({ e }) => tfOf(e, w) > 0);
    const df = holding.length;
    const idf = Math.log(1 + (mine.length - df + 0.5) / (df + 0.5));
    for (const { e, rowid } of holding) {
      if (!matchesFilter(e, filter)) continue;
      const tf = tfOf(e, w);
      const s = (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * bytes(e)) / avgdl));
      scores.set(rowid, (scores.get(rowid) ?? 0) + s);
    }
  }
  return [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([rowid, s]) => [all[rowid]!.id, s]);
}

/**
 * A user's text search scores every entry with that user's statistics only, whatever its id shares
 * with other ids (the index holds each user's words apart: owned-text.ts) and
 * whether the user holds few entries or many (COMMON_TERM_DOCS and more: common words dropped).
 */
describe("long-term text search: BM25 over the user's own entries", () => {
  it('scores exactly as BM25 written out over the user\'s entries, plain and filtered', async () => {
    const db = openDatabase(join(tmpDir(), 'bm25.db'));
    try {
      const store = new SqliteLongTermStore(db);
      const rnd = mulberry32(9);
      const entries: MemoryEntry[] = [];
      for (let i = 0; i < 5500; i++) {
        // "big" holds 2,500 rows (above COMMON_TERM_DOCS), a rare word in a few of them, a word in all
        const user = i < 3000 ? USERS[i % USERS.length]! : 'big';
        const rare = user !== 'big' ? '' : i % 97 === 0 ? ' narwhal everyday' : ' everyday';
        // every seventh row long, its frequencies counted
        const length = i % 7 === 0 ? LONG_ROW_TOKENS + Math.floor(rnd() * 60) : 1 + Math.floor(rnd() * 12);
        const content = Array.from({ length }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ') + rare;
        const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
        entries.push({ id: `e${i}`, user_id: user, session_id: `s${i % 3}`, role: i % 2 ? 'user' : 'assistant', name: NAMES[i % NAMES.length]!, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at });
      }
      store.upsertSync(entries);
      const filters = [undefined, RetrieveFiltersSchema.parse({ created_before: entries[1500]!.created_at }), RetrieveFiltersSchema.parse({ session_ids: ['s1'], roles: ['user'] })];
      let compared = 0;
      const check = async (user: string, words: string[], speakers: string[], filter?: RecordFilter) => {
        const got = (await store.searchText(user, words.join(' '), { limit: 8, where: filter, speakerTerms: speakers })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
        const want = reference(entries, user, words, new Set(speakers), filter).slice(0, 8).map(([id, s]) => [id, s.toFixed(9)]);
        assert.deepEqual(got, want, `${user}: ${words.join(' ')} ${JSON.stringify(filter ?? {})}`);
        compared += got.length;
      };
      for (const user of USERS.filter((u) => /[\p{L}\p{N}]/u.test(u))) {
        for (let q = 0; q < 12; q++) {
          const words = [...new Set(Array.from({ length: 1 + (q % 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!))];
          await check(user, words, [], filters[q % 3]);
        }
        await check(user, ['ann', 'ramen'], ['ann']);
      }
      // a big user: the common words are dropped while a rarer one remains
      await check('big', ['narwhal'], []);
      await check('big', ['narwhal'], [], filters[2]);
      assert.deepEqual(
        (await store.searchText('big', 'narwhal everyday', { limit: 8 })).map((h) => h.entry.id),
        (await store.searchText('big', 'narwhal', { limit: 8 })).map((h) => h.entry.id),
      );
      assert.ok(compared > 300, `compared ${compared} results`);

      const phraseOf = (u: string) => (store as unknown as { phrasesOf(u: string, q: string, o: { limit: number }): Array<{ match: string }> }).phrasesOf(u, 'ramen', { limit: 8 })[0]!.match;
      for (const u of ['user-12', 'user-user-3', 'ann.lee@example.com', 'Zoë-1', '@@--@@']) assert.equal(phraseOf(u), `{content name} : "${ownerPrefix(u)}ramen"`, `${u}: the word as the user's`);
    } finally {
      db.close();
    }
  });

  /**
   * `n` entries of a few random WORDS, the i-th held by userOf(i), in a store of their own; each of
   * `queries` searched for `user` scores as the reference does. Returns how many rows of the text index
   * hold "ramen" as `user`'s word, and how many of the user's entries hold it.
   */
  async function scoresAsReference(file: string, n: number, userOf: (i: number) => string, user: string): Promise<{ matched: number; holding: number }> {
    const db = openDatabase(join(tmpDir(), file));
    try {
      const store = new SqliteLongTermStore(db);
      const rnd = mulberry32(n);
      const entries: MemoryEntry[] = Array.from({ length: n }, (_, i) => {
        const content = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' ');
        const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
        return { id: `c${i}`, user_id: userOf(i), session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
      });
      store.upsertSync(entries);
      for (const words of [['harbour'], ['ramen', 'violin'], ['puppy', 'garden', 'dock']]) {
        const got = (await store.searchText(user, words.join(' '), { limit: 8 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
        assert.deepEqual(got, reference(entries, user, words, new Set()).slice(0, 8).map(([id, x]) => [id, x.toFixed(9)]), `${user}: ${words.join(' ')}`);
      }
      const matched = db.prepare('SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck().get(`"${ownedText(ownerPrefix(user), 'ramen')}"`) as number;
      return { matched, holding: entries.filter((e) => e.user_id === user && e.content.split(' ').includes('ramen')).length };
    } finally {
      db.close();
    }
  }

  it("leaves a small user's common words out while a rarer one matches, reading only enough of their matches to tell", async () => {
    // 400 entries: "everyday" in all of them (common from 60), "narwhal" in 8, "harbour" in 31, a speaker named in a third
    const db = openDatabase(join(tmpDir(), 'bm25-common.db'));
    try {
      let wordRows = 0;
      let sizedRows = 0;
      watchPhraseReads(db, (_, rowids) => (wordRows += rowids));
      const prepare = db.prepare.bind(db);
      (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
        const st = prepare(sql);
        if (sql.includes('FROM entry_sizes z WHERE z.rowid IN')) {
          const all = st.all.bind(st);
          st.all = ((...args: unknown[]) => {
            const rows = all(...(args as [])) as unknown[];
            sizedRows += rows.length;
            return rows;
          }) as typeof st.all;
        }
        return st;
      }) as typeof db.prepare;
      const store = new SqliteLongTermStore(db);
      const entries: MemoryEntry[] = Array.from({ length: 400 }, (_, i) => {
        const content = `everyday ${WORDS[i % WORDS.length]}${i % 50 === 0 ? ' narwhal' : ''}`;
        const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
        return { id: `c${i}`, user_id: 'small', session_id: 's', role: 'user', name: i % 3 === 0 ? 'Ann' : null, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
      });
      // another user holding more of the table, the same words: none of its rows is read for the small one
      const others: MemoryEntry[] = Array.from({ length: 500 }, (_, i) => ({ ...entries[i % 400]!, id: `o${i}`, user_id: 'other', content: `narwhal harbour everyday ${i}` }));
      store.upsertSync([...entries, ...others]);
      const search = async (q: string, speakers: string[] = []) => (await store.searchText('small', q, { limit: 8, speakerTerms: speakers })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
      wordRows = 0;
      const both = await search('narwhal everyday');
      assert.ok(wordRows <= 8 + 60, `rows read: ${wordRows} (8 of "narwhal", "everyday" told common by its first 60 of 400)`);
      assert.equal(sizedRows, 8, 'the lengths of the rows scored, each read once; none of the common word\'s');
      sizedRows = 0;
      await search('narwhal harbour');
      assert.equal(sizedRows, 31 - 1, "harbour's rows, each read once: the one holding narwhal too was read by the search before and kept (MatchRecords)");
      assert.deepEqual(both, await search('narwhal'));
      assert.deepEqual(both, reference(entries, 'small', ['narwhal', 'everyday'], new Set()).slice(0, 8).map(([id, x]) => [id, x.toFixed(9)]));
      // nothing rarer: the common word is searched
      assert.equal((await search('everyday')).length, 8);
      // a speaker's name is never left out, however often the speaker speaks
      const named = await search('ann narwhal', ['ann']);
      assert.deepEqual(named, reference(entries, 'small', ['ann', 'narwhal'], new Set(['ann'])).slice(0, 8).map(([id, x]) => [id, x.toFixed(9)]));
      assert.notDeepEqual(named, await search('narwhal'));
    } finally {
      db.close();
    }
  });

  it("matches exactly the owner's rows, whatever words the ids share", async () => {
    // every word of every id is in 2,000 rows or more, and "a-b" and "b-a" hold the same words: a
    // clause of the id's words matched both users' rows, each tenant's search read the other's postings
    const users = ['a-b', 'b-a', 'a-1', 'b-1'];
    const { matched, holding } = await scoresAsReference('bm25-common-ids.db', 4400, (i) => users[i % 4]!, 'a-b');
    assert.ok(holding > 50, `${holding} rows of "a-b" hold the word`);
    assert.equal(matched, holding, 'the index holds them as "a-b"\'s and no other row so');
  });

  it("decides on a user's counts of the user's size now, not those from before it grew", async () => {
    // a store that searched a user before the user grew severalfold (a bulk import, another process
    // writing) chooses the words to score and whether to score only the newest matches as a store
    // opening the file now does: its cached counts were made among far fewer entries (the bench grew a
    // user from 10k to 100k entries, and for the next minute the store kept words common by then and
    // scored every match: 10.2 ms of CPU a search against 1.9)
    const db = openDatabase(join(tmpDir(), 'bm25-growth.db'));
    try {
      const warm = new SqliteLongTermStore(db);
      let n = 0;
      const add = (count: number, words: (i: number) => string) => {
        const entries: MemoryEntry[] = Array.from({ length: count }, () => {
          const i = n++;
          const content = `${WORDS[i % WORDS.length]} everyday ${words(i)}`;
          const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
          return { id: `g${i}`, user_id: 'grows', session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(`${i} ${content}`), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
        });
        warm.upsertSync(entries);
      };
      type Match = { phrases: Array<{ match: string }>; newest?: unknown };
      const decided = (store: SqliteLongTermStore) => {
        const own = store as unknown as { phrasesOf(u: string, q: string, o: { limit: number }): unknown; matchFor(u: string, phrases: unknown): Match };
        const m = own.matchFor('grows', own.phrasesOf('grows', 'narwhal sprout everyday', { limit: 8 }));
        return { phrases: m.phrases.map((p) => p.match), newest: m.newest !== undefined };
      };
      const query = async (store: SqliteLongTermStore) => (await store.searchText('grows', 'narwhal sprout everyday', { limit: 8 })).map((h) => [h.entry.id, h.bm25.toFixed(9)]);
      const sameAsFresh = async (stage: string) => {
        const fresh = new SqliteLongTermStore(db);
        assert.deepEqual(decided(warm), decided(fresh), `${stage}: the words scored and the newest-only choice`);
        assert.deepEqual(await query(warm), await query(fresh), `${stage}: the results`);
      };
      // 1,500 entries (below COMMON_TERM_DOCS): every word scored
      add(1500, (i) => (i % 100 === 0 ? 'narwhal' : i % 15 === 0 ? 'sprout' : ''));
      await query(warm);
      await sameAsFresh('1,500 entries');
      // 2,500: "everyday" is in every entry, common now
      add(1000, (i) => (i % 100 === 0 ? 'narwhal' : i % 15 === 0 ? 'sprout' : ''));
      await sameAsFresh('2,500 entries');
      const p = ownerPrefix('grows');
      assert.deepEqual(decided(warm).phrases, [`{content name} : "${p}narwhal"`, `{content name} : "${p}sprout"`]);
      // 5,500: "sprout" is in 3,000 more, common too
      add(3000, () => 'sprout');
      await sameAsFresh('5,500 entries');
      assert.deepEqual(decided(warm).phrases, [`{content name} : "${p}narwhal"`]);
    } finally {
      db.close();
    }
  });

  it('scores a user holding most of the table and one holding little alike, each matching its own rows', async () => {
    const userOf = (i: number) => (i % 4 === 0 ? 'user-few' : 'user-most');
    for (const user of ['user-most', 'user-few']) {
      const { matched, holding } = await scoresAsReference(`bm25-${user}.db`, 400, userOf, user);
      assert.ok(holding > 5, `${user}: ${holding} rows hold the word`);
      assert.equal(matched, holding, user);
    }
  });
});
