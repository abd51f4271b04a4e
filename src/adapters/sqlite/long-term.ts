import type { MemoryEntry } from '../../domain/entry.js';
import { filterTest, isEmptyFilter } from '../../domain/filters.js';
import { COMMON_TERM_DOCS, commonFrom, expansionTerms, queryTerms, withoutCommon } from '../../retrieval/query-terms.js';
import type { EntryPatch, ListOptions, LongTermStore, MemoryRef, PruneCriteria, TextHit, TextIndexMerge } from '../../ports/long-term.js';
import type { Statement } from 'better-sqlite3';
import { atomically, onFile, type Db } from './db.js';
import { filterSql } from './filter-sql.js';
import { mergeTextIndexOnThread, mergeTextIndexSync } from './text-index-merge.js';
import { UserBm25, type RowTest, type RowidSpan, type SearchPlan, type WeightedPhrase } from './bm25.js';
import { EntryRepeats, NAME_WEIGHT, repeatKey, repeatsOf } from './repeats.js';
import { TransactionBatcher } from './transaction-batcher.js';
import { eachInSteps, STEP_MS } from './steps.js';
import { giveTurn, room } from '../../pace.js';
import { contentHash } from '../../domain/hash.js';
import { ENTRY_COLUMNS as COLUMNS, ENTRY_VALUES, entryParams, entryRowOf, rowToEntry, type EntryRow } from './rows/entries.js';
import { ownedText, ownerPrefix, prepareOwnedText, PREPARED_FROM_CHARS } from './owned-text.js';

/** `%`, `_` and `\` in user text match themselves in a LIKE pattern with ESCAPE '\'. */
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Stored times are canonical ISO strings (Date#toISOString), so a range compares as text. */
function createdRange(o: ListOptions): { from: string | null; before: string | null } {
  return {
    from: o.createdFrom === undefined ? null : new Date(o.createdFrom).toISOString(),
    before: o.createdBefore === undefined ? null : new Date(o.createdBefore).toISOString(),
  };
}

/** A search's options as the test of a match's attributes (see UserBm25): the filter's meaning (matchesFilter), its session and period. */
function searchTest(o: ListOptions): RowTest {
  const where = isEmptyFilter(o.where) ? undefined : o.where;
  const { from, before } = createdRange(o);
  const session = o.sessionId;
  if (!where && session === undefined && from === null && before === null) return null;
  const allows = filterTest(where);
  return (r) => allows(r) && (session === undefined || r.session_id === session) && (from === null || r.created_at >= from) && (before === null || r.created_at < before);
}

const DF_CACHE_SIZE = 10_000;
const DF_CACHE_MS = 60_000;
/** a cached count is counted again once the rows it was counted among have grown or shrunk by 1/DF_CACHE_DRIFT */
const DF_CACHE_DRIFT = 16;
/** a user's phrase's key in the document-frequency cache */
const dfKey = (userId: string, match: string) => `${userId}\u0000${match}`;
/** a big user's query whose words match more of its entries than this scores only its newest SCORED_MATCHES matches */
const NEWEST_ABOVE = 1000;
const SCORED_MATCHES = 500;


/** the most pieces of one query word searched (see wordMatcher) */
export const MAX_WORD_PIECES = 8;

/** the most words of two pieces one search reads as phrases (see wordMatcher) */
export const PHRASES_PER_SEARCH = 2;

/** A quoted FTS5 string: user text is never read as query syntax. */
function ftsString(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/**
 * A search's query words as FTS5 matches them. A word holding an apostrophe, hyphen or underscore is
 * several tokens to FTS5. The first PHRASES_PER_SEARCH distinct words of two pieces ("zero-waste",
 * "can't") are phrases: the pieces side by side. In any other such word each of its first
 * MAX_WORD_PIECES pieces must be in the row, wherever it stands, given in one order so that words
 * searched alike are read once (UserBm25.score). FTS5 checks a phrase at every place its first token
 * stands in every matched row: a 4,000-character query of "a-a-a-…" against a turn of the same held the
 * event loop 0.4–0.7 s, and 32 words of several pieces against 100 turns of 32,000 characters made of
 * those pieces 10.9 s, against 25 ms now (`node dist/bench/profile-pieces.js`). Words of two pieces
 * as phrases find more than as their pieces (`npm run eval -- --all --no-ablation`: LoCoMo 0.758
 * against 0.756, RealMem 0.702 against 0.699), at any cap from one phrase a search up; longer words
 * find the same either way.
 */
export function wordMatcher(prefix: string): (word: string) => string {
  const phrases = new Set<string>();
  return (word) => {
    const pieces = word.split(/[^\p{L}\p{N}]+/u).filter((p) => p !== '');
    const phrase = pieces.join(' ');
    if (pieces.length === 2 && (phrases.has(phrase) || phrases.size < PHRASES_PER_SEARCH)) {
      phrases.add(phrase);
      return ftsString(ownedText(prefix, phrase));
    }
    const distinct = [...new Set(pieces.slice(0, MAX_WORD_PIECES))].sort();
    return distinct.length > 1 ? `(${distinct.map((p) => ftsString(ownedText(prefix, p))).join(' AND ')})` : ftsString(ownedText(prefix, distinct[0] ?? word));
  };
}

/**
 * The WHERE clause of a prune over `entries` or `turns` (same column names): unpinned rows matching
 * every criterion given. No criterion prunes nothing rather than everything (the user alone is a
 * scope, not a criterion). A turn not yet scored (importance NULL) is never "below" anything.
 */
export function pruneWhere(c: PruneCriteria): { where: string; params: Record<string, unknown> } | null {
  if (c.olderThanDays === undefined && c.belowImportance === undefined && c.sessionId === undefined) return null;
  const where = ['pinned = 0'];
  const params: Record<string, unknown> = {};
  if (c.userId !== undefined) (where.push('user_id = @user_id'), (params.user_id = c.userId));
  if (c.sessionId !== undefined) (where.push('session_id = @session_id'), (params.session_id = c.sessionId));
  if (c.olderThanDays !== undefined) {
    where.push('created_at < @cutoff');
    params.cutoff = new Date(Date.now() - c.olderThanDays * 86_400_000).toISOString();
  }
  if (c.belowImportance !== undefined) (where.push('importance < @below'), (params.below = c.belowImportance));
  return { where: where.join(' AND '), params };
}

/** an entry read with `.raw()` */
const entryOf = (values: unknown[]): MemoryEntry => rowToEntry(entryRowOf(values));

// a substring search reads the user's entries a page at a time, newest first (searchSubstring): a page
// is the rows from the key (@c, @r) exclusive, to the page's last key (@lc, @lr) inclusive
const AFTER_KEY = 'created_at <= @c AND (created_at < @c OR rowid < @r)';
// SQLite cannot narrow an index by a condition inside an OR: a session is a condition of a statement
// of its own (see statement), not an `@session_id IS NULL OR …` (a session of a user of 100k entries:
// 184 ms to list, 0.1 ms through the session's index), and a bound left out of a period is the widest
// one (a named period was found by walking the user's entries from the newest: 6-14 ms). `from`: the
// table, and the index a session's read must take
const likeSql = (from: string, conditions: string) =>
  `SELECT ${COLUMNS} FROM ${from}
   WHERE user_id = @user_id AND ${AFTER_KEY} AND created_at >= @lc AND (created_at > @lc OR rowid >= @lr)
     AND (content LIKE @pattern ESCAPE '\\' OR coalesce(name, '') LIKE @pattern ESCAPE '\\')${conditions}
   ORDER BY created_at DESC, rowid DESC LIMIT @limit`;
/** the last key of the page after (@c, @r), from the index alone; none when fewer rows are left */
const pageEndSql = (from: string, conditions: string) =>
  `SELECT created_at, rowid FROM ${from} WHERE user_id = @user_id AND ${AFTER_KEY}${conditions}
   ORDER BY created_at DESC, rowid DESC LIMIT 1 OFFSET @offset`;
/** the first key of a substring search: before every stored one */
const FIRST_KEY = { c: '\u{10FFFF}', r: Number.MAX_SAFE_INTEGER };
const recentSql = (from: string, conditions: string) =>
  `SELECT ${COLUMNS} FROM ${from}
   WHERE user_id = @user_id
     AND created_at >= coalesce(@from, '') AND created_at < coalesce(@before, char(1114111))${conditions}
   ORDER BY created_at DESC, rowid DESC LIMIT @limit`;
/** filtered statements differ only in their conditions; a few shapes are in use at a time */
const FILTERED_CACHE = 64;

export interface SqliteLongTermOptions {
  /**
   * how long each transaction of a prune deletes before it waits as long, or a substring search reads
   * before it makes room for requests (src/pace.ts, room) (default STEP_MS; 0: a row or a page each)
   */
  stepMs?: number;
  /** entries a substring search tests at a time (default SUBSTRING_PAGE) */
  substringPage?: number;
}

/**
 * entries a substring search tests at a time: LIKE reads every row it tests, ~0.6 µs a real turn
 * (RealMem: p50 459 characters) once read, so a page is well within a slice
 */
export const SUBSTRING_PAGE = 1_000;

/** Long-term store on the shared SQLite file. Statements are prepared once, at construction. */
export class SqliteLongTermStore implements LongTermStore {
  readonly backend = 'sqlite' as const;
  private readonly s;
  private readonly stepMs: number;
  private readonly substringPage: number;
  /** `rowsOf` statements by how many rowids they take */
  private readonly byRowids = new Map<number, ReturnType<Db['prepare']>>();
  private readonly dfCache = new Map<string, { n: number; cap: number; among: number; until: number }>();
  private readonly filtered = new Map<string, Statement>();
  private readonly bm25: UserBm25;
  private readonly repeats: EntryRepeats;
  /** the long texts being prepared for their writes, one after the other (persistTurn) */
  private preparing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    /** shared with the turn log: one writer's commits (a persist job's entry in its `later` lane) */
    readonly writes: TransactionBatcher = new TransactionBatcher(db),
    options: SqliteLongTermOptions = {},
  ) {
    this.stepMs = options.stepMs ?? STEP_MS;
    this.substringPage = Math.max(1, options.substringPage ?? SUBSTRING_PAGE);
    this.bm25 = new UserBm25(db);
    this.repeats = new EntryRepeats(db);
    this.s = {
      insert: db.prepare(
        `INSERT INTO entries (${COLUMNS}) VALUES (${ENTRY_VALUES}) ON CONFLICT DO NOTHING`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE user_id = ? AND id = ?`),
      turnHolds: db.prepare('SELECT 1 FROM turns WHERE user_id = ? AND id = ? AND content_hash = ?').pluck(),
      // min(the user's rows holding a phrase, cap): the row's owner (entry_sizes) decides, the words' prefix only narrows
      userDocsCapped: db
        .prepare('SELECT count(*) FROM (SELECT 1 FROM entries_fts f CROSS JOIN entry_sizes z ON z.rowid = f.rowid WHERE entries_fts MATCH ? AND z.user_id = ? LIMIT ?)')
        .pluck(),
      // the same count while every row of the index is the user's: no row's owner to read (a third of the cost)
      wholeIndexDocsCapped: db.prepare('SELECT count(*) FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)').pluck(),
      // rows as arrays of values, mapped here (entryRowOf): cheaper than the driver's objects
      like: db.prepare(likeSql('entries', '')).raw(),
      pageEnd: db.prepare(pageEndSql('entries', '')).raw(),
      sessionPageEnd: db.prepare(pageEndSql('entries INDEXED BY entries_user_session', ' AND session_id = @session_id')).raw(),
      recent: db.prepare(recentSql('entries', '')).raw(),
      // the rowids the user's entries of these sessions lie between (entries_user_session)
      sessionSpan: db.prepare('SELECT min(rowid), max(rowid) FROM entries WHERE user_id = ? AND session_id IN (SELECT value FROM json_each(?))').raw(),
      // whether any entry of the user names its speaker (text_stats.named, migration 14)
      named: db.prepare('SELECT named > 0 FROM text_stats WHERE user_id = ?').pluck(),
      participants: db.prepare(
        `SELECT DISTINCT name FROM (SELECT name FROM entries WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?) WHERE name IS NOT NULL AND name != ''`,
      ).pluck(),
      update: db.prepare(
        `UPDATE entries SET content = coalesce(@content, content), content_hash = coalesce(@content_hash, content_hash),
           importance = coalesce(@importance, importance), pinned = coalesce(@pinned, pinned), updated_at = @updated_at
         WHERE user_id = @user_id AND id = @id`,
      ),
      delete: db.prepare('DELETE FROM entries WHERE user_id = ? AND id = ?'),
      deleteUser: db.prepare('DELETE FROM entries WHERE user_id = ? RETURNING id'),
      deleteSession: db.prepare('DELETE FROM entries WHERE user_id = ? AND session_id = ? RETURNING id'),
      count: db.prepare('SELECT count(*) AS n FROM entries'),
      countUser: db.prepare('SELECT count(*) AS n FROM entries WHERE user_id = ?'),
      scan: db.prepare(`SELECT ${COLUMNS}, rowid FROM entries WHERE rowid > ? ORDER BY rowid LIMIT ?`),
    };
  }

  upsert(entries: readonly MemoryEntry[]): Promise<string[]> {
    return this.writes.run(() => this.upsertSync(entries));
  }

  /** Synchronous form, for callers that write in the same transaction as other tables. */
  upsertSync(entries: readonly MemoryEntry[]): string[] {
    const written: string[] = [];
    atomically(this.db, () => {
      for (const e of entries) if (this.insert(e)) written.push(e.id);
    }, 'deferred');
    return written;
  }

  async persistTurn(entry: MemoryEntry): Promise<boolean> {
    // what the write derives from a long text, worked out in the process's slices before it: inside
    // the batch's transaction, a 32,000-character turn's repeated words and owned text were ~4 ms of
    // its ~7 ms insert, in one turn of the event loop with the batch's other writes. One text after
    // the other: a batch's jobs call this together, and each asking room() at once got it at once
    let record: string | null | undefined;
    if (entry.content.length >= PREPARED_FROM_CHARS) {
      const prepared = this.preparing.then(async () => {
        await room();
        record = repeatsOf(entry.content, entry.name);
        prepareOwnedText(entry.user_id, entry.content);
      });
      this.preparing = prepared.catch(() => undefined);
      await prepared;
    }
    // the check and the write in one transaction (the batcher's): a delete or edit of the turn commits
    // wholly before it (nothing is written) or wholly after (and then removes this entry too). A job's
    // result: in the batcher's later lane
    return this.writes.later(() => {
      if (!this.s.turnHolds.get(entry.user_id, entry.id, entry.content_hash)) return false;
      this.insert(entry, record);
      return true;
    });
  }

  /** `record`: the entry's repeatsOf, when counted before the write */
  private insert(e: MemoryEntry, record?: string | null): boolean {
    const info = this.s.insert.run(entryParams(e));
    if (info.changes === 0) return false;
    this.repeats.inserted(info.lastInsertRowid, e.content, e.name, record);
    return true;
  }

  async get(userId: string, id: string): Promise<MemoryEntry | null> {
    return this.getSync(userId, id);
  }

  getSync(userId: string, id: string): MemoryEntry | null {
    const row = this.s.get.get(userId, id) as EntryRow | undefined;
    return row ? rowToEntry(row) : null;
  }

  async searchText(userId: string, query: string, o: ListOptions): Promise<TextHit[]> {
    // a caller that gave up (its tier's budget ran out) before the search started: nothing is run
    o.signal?.throwIfAborted();
    const phrases = this.phrasesOf(userId, query, o);
    // a big user's phrases whose counts were never kept are counted first; a smaller user's search
    // counts nothing ahead (its words are counted as its matches are read), and does not wait
    const { docs } = this.bm25.userStats(userId);
    if (docs >= COMMON_TERM_DOCS) {
      const uncounted = phrases.filter((p) => !this.dfCache.has(dfKey(userId, p.match)));
      if (uncounted.length > 0) {
        await this.countAhead(userId, docs, uncounted);
        o.signal?.throwIfAborted();
      }
    }
    return this.searchTextSync(userId, query, o, phrases);
  }

  /**
   * A big user's words whose document frequencies were never kept (counted; or pushed out since),
   * counted before the search, in the process's slices (room()): the search then finds them kept (a
   * kept count that has expired is counted again inside the search, as before). On a fresh connection
   * they were a third of a big user's first search, ~35 ms of the ~120 it held the event loop (100k
   * real turns of one user, a chat message's words and its feedback words). Counted outside the
   * search's snapshot, as a kept count is anyway: a count is reused while the user's entries stay
   * within DF_CACHE_DRIFT of what they were. On pages already read the counts fit in a slice and
   * nothing pauses; on a cold connection the retrieve waiting for them pauses too (a fresh serve's next
   * retrieves of new words, one at a time: ~50 ms against ~35; given a turn instead of a pause, the
   * other requests waited as long as before).
   */
  private async countAhead(userId: string, docs: number, phrases: readonly WeightedPhrase[]): Promise<void> {
    const whole = docs === this.bm25.tableRows();
    for (const p of phrases) {
      await room();
      this.userDocsCapped(userId, docs, whole, p.match);
    }
  }

  /** searchText without the signal: one synchronous read of this connection (`phrases`: the query's, when worked out already) */
  searchTextSync(userId: string, query: string, o: ListOptions, phrases = this.phrasesOf(userId, query, o)): TextHit[] {
    // one snapshot: the counts matchFor takes and the rows they are taken among are of one state of the file
    return atomically(this.db, () => this.searchSnapshot(userId, phrases, o), 'deferred');
  }

  private searchSnapshot(userId: string, given: WeightedPhrase[], o: ListOptions): TextHit[] {
    const { phrases, newest, common, commonKnown } = this.matchFor(userId, given);
    if (phrases.length === 0) return [];
    const span = this.sessionSpan(userId, o);
    if (span === 'none') return [];
    const sessions = o.bySession ? new Map<string, number>() : undefined;
    const hits = this.ownersOf(userId, this.bm25.score(userId, phrases, searchTest(o), o.limit, { newest, span, common, commonKnown, sessions }), o.limit);
    return sessions ? hits.map((h) => ({ ...h, session_bm25: sessions.get(h.entry.session_id) ?? 0 })) : hits;
  }

  /**
   * A search within named sessions reads only the stretch of the text index their entries lie in: a
   * session's turns are written together, so their rowids are close, and the newest matches of the
   * whole history are not walked to find the few in those sessions (100k real turns of one user, three
   * sessions named: p99 263 ms, most of it that walk). 'none': the sessions hold no entry of the user.
   */
  private sessionSpan(userId: string, o: ListOptions): RowidSpan | 'none' | undefined {
    const sessions = [...(o.where?.session_ids ?? []), ...(o.sessionId !== undefined ? [o.sessionId] : [])];
    if (sessions.length === 0) return undefined;
    const [from, to] = this.s.sessionSpan.get(userId, JSON.stringify(sessions)) as [number | null, number | null];
    return from === null || to === null ? 'none' : { from, to };
  }

  /**
   * The first `limit` of the user's rows among ranked [rowid, score] pairs, best first. Rows are read
   * a few more than still wanted at a time: most rowids of a big user's matches are its own, and
   * reading a row (and parsing it) costs more than ranking it.
   */
  private ownersOf(userId: string, ranked: ReadonlyArray<[number, number]>, limit: number): TextHit[] {
    const hits: TextHit[] = [];
    for (let at = 0; at < ranked.length && hits.length < limit; ) {
      const chunk = ranked.slice(at, at + Math.max(8, Math.ceil((limit - hits.length) * 1.25)));
      at += chunk.length;
      const rows = this.bm25.entryRows(chunk.map(([rowid]) => rowid), (rowids) => this.rowsOf(rowids));
      for (const [rowid, r] of chunk) {
        const row = rows.get(rowid);
        if (!row || row.user_id !== userId) continue;
        hits.push({ entry: rowToEntry(row), bm25: r });
        if (hits.length === limit) break;
      }
    }
    return hits;
  }

  /** entries by rowid, in one statement */
  private rowsOf(rowids: readonly number[]): Map<number, EntryRow> {
    let st = this.byRowids.get(rowids.length);
    if (!st) {
      st = this.db.prepare(`SELECT rowid, ${COLUMNS} FROM entries WHERE rowid IN (${rowids.map(() => '?').join(', ')})`).raw();
      if (this.byRowids.size < 64) this.byRowids.set(rowids.length, st);
    }
    const out = new Map<number, EntryRow>();
    for (const v of st.all(rowids) as unknown[][]) out.set(v[0] as number, entryRowOf(v, 1));
    return out;
  }

  /**
   * Which of a query's phrases (phrasesOf) are searched, and how. The user's common content words
   * (query-terms' commonFrom) are left out while a rarer word has matches: for a user with many (≥
   * COMMON_TERM_DOCS) entries here, by counts of their own, for any other as the search reads its
   * matches (`common`), a word found common by a search of the last minute not read again
   * (`commonKnown`, kept as the big user's counts are). When the words kept by a big user still match
   * more than NEWEST_ABOVE of its entries, `newest` says so: the newest SCORED_MATCHES of them are
   * scored, each word with its document frequency over all of the user's entries. Every count is of the
   * user's own rows.
   */
  private matchFor(userId: string, phrases: WeightedPhrase[]): { phrases: WeightedPhrase[] } & Pick<SearchPlan, 'newest' | 'common' | 'commonKnown'> {
    if (phrases.length === 0) return { phrases };
    // the user's entry count as it is now (text_stats, kept by triggers): a count cached for a minute
    // kept a user that had just grown past COMMON_TERM_DOCS on the path for small users
    const { docs } = this.bm25.userStats(userId);
    const whole = docs === this.bm25.tableRows();
    // a small user's common words are told by its matches as they are read (UserBm25.score); a big
    // user's here, by its counts, so that the search reads none of them
    if (docs < COMMON_TERM_DOCS) {
      const common = commonFrom(docs);
      const commonKnown = {
        isCommon: (match: string) => this.cachedDocs(dfKey(userId, match), docs, common) === common,
        // only a common word's count is of use here: every other word is read each time anyway
        counted: (match: string, n: number) => {
          if (n >= common) this.rememberDocs(dfKey(userId, match), docs, common, common);
        },
      };
      return { phrases, common, commonKnown };
    }
    const dfOf = (match: string) => this.userDocsCapped(userId, docs, whole, match);
    const kept = withoutCommon(phrases, (p) => dfOf(p.match), (p) => p.key === null, commonFrom(docs));
    let matches = 0;
    for (const p of kept) matches += dfOf(p.match);
    return { phrases: kept, newest: matches > NEWEST_ABOVE ? { rows: SCORED_MATCHES, dfOf, whole } : undefined };
  }

  /**
   * The phrases of a user's query and its added words, their words prefixed as the index holds the
   * user's (owned-text.ts). A speaker's word matches who said an entry (the name column, weighing
   * NAME_WEIGHT); any other word the content or the name.
   */
  private phrasesOf(userId: string, query: string, { speakerTerms, expansion = [] }: ListOptions): WeightedPhrase[] {
    const speakers = new Set(speakerTerms ?? []);
    const matchOf = wordMatcher(ownerPrefix(userId));
    const content = (t: string, boost: number): WeightedPhrase => ({ match: `{content name} : ${matchOf(t)}`, weight: 1, key: repeatKey(t), boost });
    const phrases = queryTerms(query).map((t) => (speakers.has(t) ? { match: `name : ${matchOf(t)}`, weight: NAME_WEIGHT, key: null, boost: 1 } : content(t, 1)));
    for (const [w, weight] of expansionTerms(expansion)) {
      const key = repeatKey(w);
      const same = phrases.find((p) => p.key === key);
      if (same) same.boost += weight;
      else phrases.push(content(w, weight));
    }
    return phrases;
  }

  /**
   * min(the user's entries holding the phrase, COMMON_TERM_DOCS), cached (see counted). `whole`: the
   * user's entries are every row of the index (in this snapshot), so no match is another user's.
   */
  private userDocsCapped(userId: string, userDocs: number, whole: boolean, match: string): number {
    return this.counted(dfKey(userId, match), userDocs, () =>
      whole
        ? (this.s.wholeIndexDocsCapped.get(match, COMMON_TERM_DOCS) as number)
        : (this.s.userDocsCapped.get(match, userId, COMMON_TERM_DOCS) as number),
    );
  }

  /**
   * A count cached for DF_CACHE_MS while the rows it was counted among (`among`: the user's entries,
   * or the index's) number within 1/DF_CACHE_DRIFT of what they did. Time alone kept counts made before
   * a user grew severalfold (a bulk import, another process's writes): 100k entries of one user searched
   * with its counts from 10k kept words common by then and scored every match, 10.2 ms of CPU a search
   * against 1.9 (and weighed words by stale document frequencies). A live chat adds a few entries a
   * minute, well within the drift, so its counts are still reused.
   */
  private counted(key: string, among: number, count: () => number): number {
    const hit = this.cachedDocs(key, among, COMMON_TERM_DOCS);
    if (hit !== null) return hit;
    const n = count();
    this.rememberDocs(key, among, n, COMMON_TERM_DOCS);
    return n;
  }

  /**
   * min(the cached count, `cap`), or null when none answers: none kept, too old, counted among rows
   * that have drifted since (see counted), or counted up to a lower cap that it reached (a small user's
   * common words are counted up to its `common`, which a count up to COMMON_TERM_DOCS may not stop at)
   */
  private cachedDocs(key: string, among: number, cap: number): number | null {
    const hit = this.dfCache.get(key);
    if (!hit || hit.until <= Date.now() || Math.abs(among - hit.among) * DF_CACHE_DRIFT > hit.among) return null;
    return hit.n < hit.cap || hit.cap >= cap ? Math.min(hit.n, cap) : null;
  }

  /** `n`: the rows holding the key's phrase among `among` of them, counted up to `cap` */
  private rememberDocs(key: string, among: number, n: number, cap: number): void {
    if (this.dfCache.size >= DF_CACHE_SIZE) this.dfCache.clear();
    this.dfCache.set(key, { n, cap, among, until: Date.now() + DF_CACHE_MS });
  }

  /**
   * The user's newest `o.limit` entries holding `q`. LIKE reads every row it tests, and a substring
   * that no entry holds tests them all: one statement over a user of 100k real turns held the event
   * loop 58 ms (143 on a cold cache). So the entries are tested a page at a time, newest first — a
   * page's bounds found in the index alone, then its rows read — in the process's slices (src/pace.ts).
   */
  async searchSubstring(userId: string, q: string, o: ListOptions): Promise<MemoryEntry[]> {
    const out: MemoryEntry[] = [];
    const match = this.statement(this.s.like, likeSql, o);
    const pageEnd = o.sessionId === undefined ? this.s.pageEnd : this.s.sessionPageEnd;
    const at = { user_id: userId, session_id: o.sessionId ?? null };
    const pattern = likePattern(q);
    let key = FIRST_KEY;
    for (;;) {
      o.signal?.throwIfAborted();
      const end = pageEnd.get({ ...at, ...key, offset: this.substringPage - 1 }) as [string, number] | undefined;
      const rows = match.all({ ...at, ...key, lc: end?.[0] ?? '', lr: end?.[1] ?? 0, pattern, limit: o.limit - out.length });
      for (const row of rows as unknown[][]) out.push(entryOf(row));
      if (!end || out.length >= o.limit) return out;
      key = { c: end[0], r: end[1] };
      await room(this.stepMs);
    }
  }

  async recent(userId: string, o: ListOptions): Promise<MemoryEntry[]> {
    const rows = this.statement(this.s.recent, recentSql, o).all({ user_id: userId, session_id: o.sessionId ?? null, ...createdRange(o), limit: o.limit });
    return (rows as unknown[][]).map(entryOf);
  }

  async participants(userId: string, limit: number): Promise<string[]> {
    // most users name no speaker (a user and an assistant): their newest entries are not read (100k
    // entries of 1,000 users: 0.13-0.36 ms of CPU a user's first retrieve of the minute)
    if (!this.s.named.get(userId)) return [];
    return this.s.participants.all(userId, limit) as string[];
  }

  /**
   * The statement for a read of `o.sessionId` and under `o.where`: the plain one, or one with those
   * conditions in its WHERE clause (so LIMIT counts matching entries only), bound to the filter's
   * values.
   */
  private statement(plain: Statement, sql: (from: string, conditions: string) => string, o: ListOptions): { all: (params: Record<string, unknown>) => unknown[] } {
    const f = filterSql(o.where);
    if (o.sessionId === undefined && f.sql === '') return plain;
    // without statistics (no ANALYZE) SQLite prefers the (user_id, created_at) range to the session's
    // index, and walks the user's period for a session of a few rows
    const text = o.sessionId === undefined ? sql('entries', f.sql) : sql('entries INDEXED BY entries_user_session', ` AND session_id = @session_id${f.sql}`);
    let st = this.filtered.get(text);
    if (!st) {
      if (this.filtered.size >= FILTERED_CACHE) this.filtered.clear();
      this.filtered.set(text, (st = this.db.prepare(text).raw()));
    }
    const bound = st;
    return { all: (params) => bound.all({ ...params, ...f.params }) };
  }

  async update(userId: string, id: string, patch: EntryPatch): Promise<MemoryEntry | null> {
    // a long new text: what the write derives from both texts worked out in the process's slices
    // before it, as persistTurn does (the text index's owned texts of the old one and the new, the new
    // one's repeated words). Inside the transaction, an edit of a 32,000-character reply to another
    // held the event loop ~45 ms, ~11 of them these
    let record: { content: string; name: string | null; repeats: string | null } | undefined;
    if (patch.content !== undefined && patch.content.length >= PREPARED_FROM_CHARS) {
      await room();
      const held = this.getSync(userId, id);
      if (held) {
        prepareOwnedText(userId, held.content);
        prepareOwnedText(userId, patch.content);
        record = { content: patch.content, name: held.name ?? null, repeats: repeatsOf(patch.content, held.name ?? null) };
        // the transaction in a turn of its own: not after the request's read and this in one
        await giveTurn();
      }
    }
    // a new text drops the entry's repeats (its trigger): recorded again with it
    const info = atomically(this.db, () => {
      const done = this.s.update.run({
        user_id: userId,
        id,
        content: patch.content ?? null,
        content_hash: patch.content === undefined ? null : contentHash(patch.content),
        importance: patch.importance ?? null,
        pinned: patch.pinned === undefined ? null : patch.pinned ? 1 : 0,
        updated_at: new Date().toISOString(),
      });
      if (done.changes > 0 && patch.content !== undefined) this.repeats.rewritten(userId, id, record);
      return done;
    });
    return info.changes > 0 ? this.getSync(userId, id) : null;
  }

  async delete(userId: string, ids: readonly string[]): Promise<number> {
    let n = 0;
    this.db.transaction(() => {
      for (const id of ids) n += this.s.delete.run(userId, id).changes;
    })();
    return n;
  }

  /**
   * The rows matching now are listed, then deleted a row a statement in steps (inSteps: each leaves the
   * text index under FTS5's secure-delete), each checked against the criteria again as it goes, so an
   * entry pinned or edited meanwhile stays.
   */
  async prune(c: PruneCriteria): Promise<MemoryRef[]> {
    const q = pruneWhere(c);
    if (!q) return [];
    const rowids = this.db.prepare(`SELECT rowid FROM entries WHERE ${q.where}`).pluck().all(q.params) as number[];
    const drop = this.db.prepare(`DELETE FROM entries WHERE rowid = @rowid_ AND ${q.where} RETURNING user_id, id, session_id`);
    const out: MemoryRef[] = [];
    await eachInSteps(this.db, rowids, (rowid) => out.push(...(drop.all({ ...q.params, rowid_: rowid }) as MemoryRef[])), this.stepMs);
    return out;
  }

  async deleteWhere(userId: string, sessionId?: string): Promise<string[]> {
    const rows = (sessionId === undefined ? this.s.deleteUser.all(userId) : this.s.deleteSession.all(userId, sessionId)) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  async count(userId?: string): Promise<number> {
    const row = (userId === undefined ? this.s.count.get() : this.s.countUser.get(userId)) as { n: number };
    return row.n;
  }

  async mergeTextIndex(): Promise<TextIndexMerge> {
    // an in-memory database has no other connection to merge it on
    return onFile(this.db) ? mergeTextIndexOnThread(this.db.name) : mergeTextIndexSync(this.db);
  }

  /** Pages through every entry of every user in insertion order (memory reindex). */
  async *scan(batch = 1000): AsyncGenerator<MemoryEntry[]> {
    let after = 0;
    for (;;) {
      const rows = this.s.scan.all(after, batch) as Array<EntryRow & { rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map(rowToEntry);
    }
  }
}
