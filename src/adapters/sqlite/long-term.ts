import type { MemoryEntry } from '../../domain/entry.js';
import { queryTerms } from '../../retrieval/query-terms.js';
import type { EntryPatch, ListOptions, LongTermStore, MemoryRef, PruneCriteria, TextHit } from '../../ports/long-term.js';
import type { Statement } from 'better-sqlite3';
import { atomically, type Db } from './db.js';
import { isEmptyFilter } from '../../domain/filters.js';
import { filterSql } from './filter-sql.js';
import { TextSearchThread } from './text-search-thread.js';
import { CachedBm25, singleToken } from './bm25.js';
import { TransactionBatcher } from './transaction-batcher.js';
import { contentHash } from '../../domain/hash.js';
import { ENTRY_COLUMNS as COLUMNS, ENTRY_VALUES, entryColumnsOf, entryParams, rowToEntry, type EntryRow } from './rows/entries.js';

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

/** A word in at least this many of a user's entries is "common" for that user (see matchFor). */
export const COMMON_TERM_DOCS = 2000;
const DF_CACHE_SIZE = 10_000;
/** matches FTS5 ranks alone before their rows are read (see `ranked`) */
const RANKED_POOL = 128;
const DF_CACHE_MS = 60_000;
/** a big user's query whose words match more entries than this ranks only the newest SCORED_MATCHES (see rankedNewest) */
const NEWEST_ABOVE = 1000;
const SCORED_MATCHES = 500;

/** the words of an ASCII id as FTS5's unicode61 tokenizer splits it (its ASCII token characters) */
const OWNER_WORDS = /[A-Za-z0-9]+/g;

/** a query word and its FTS5 phrase (a quoted string, column-filtered for a speaker's name) */
interface Phrase {
  word: string;
  match: string;
}

/** A quoted FTS5 string: user text is never read as query syntax. */
function ftsString(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
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

// weights: content 1, participant name 2, owner 0 (the owner column only narrows the match).
// CROSS JOIN keeps the match as the outer loop: with a filter on an indexed column (created_at,
// session_id) the planner otherwise walks the user's rows of that index and evaluates the whole MATCH
// again for each one — 126 ms instead of 3 for a created_before filter on RealMem's 5k turns.
const ftsSql = (filter: string) =>
  `SELECT ${entryColumnsOf('e')}, -bm25(entries_fts, 1.0, 2.0, 0.0) AS rank
   FROM entries_fts CROSS JOIN entries e ON e.rowid = entries_fts.rowid
   WHERE entries_fts MATCH @match AND e.user_id = @user_id AND (@session_id IS NULL OR e.session_id = @session_id)
     AND (@from IS NULL OR e.created_at >= @from) AND (@before IS NULL OR e.created_at < @before)${filter}
   ORDER BY bm25(entries_fts, 1.0, 2.0, 0.0) LIMIT @limit`;
const likeSql = (filter: string) =>
  `SELECT ${COLUMNS} FROM entries
   WHERE user_id = @user_id AND (@session_id IS NULL OR session_id = @session_id)
     AND (content LIKE @pattern ESCAPE '\\' OR coalesce(name, '') LIKE @pattern ESCAPE '\\')${filter}
   ORDER BY created_at DESC LIMIT @limit`;
const recentSql = (filter: string) =>
  `SELECT ${COLUMNS} FROM entries
   WHERE user_id = @user_id AND (@session_id IS NULL OR session_id = @session_id)
     AND (@from IS NULL OR created_at >= @from) AND (@before IS NULL OR created_at < @before)${filter}
   ORDER BY created_at DESC, rowid DESC LIMIT @limit`;
/** filtered statements differ only in their conditions; a few shapes are in use at a time */
const FILTERED_CACHE = 64;

export interface SqliteLongTermOptions {
  /**
   * BM25 searches on a worker thread with its own read-only connection (TextSearchThread), so they
   * run beside the semantic scan of the same retrieval pass. Default: on for a database file; a
   * `:memory:` or read-only database searches on the caller's thread.
   */
  textSearchThread?: boolean;
  /**
   * Searches of a user with fewer entries than this run on the caller's thread even when the thread is
   * on (default COMMON_TERM_DOCS). A small user's match is narrowed by the owner clause and costs well
   * under a millisecond, and its semantic scan is as short, so there is nothing for the thread to run
   * beside; handing the call over cost more than the search (1,000 users, 100k entries: CPU per pass,
   * all threads, 3.0–3.8 ms through the thread against 1.9 on the caller's thread).
   */
  threadFrom?: number;
}

/** Long-term store on the shared SQLite file. Statements are prepared once, at construction. */
export class SqliteLongTermStore implements LongTermStore {
  readonly backend = 'sqlite' as const;
  private readonly s;
  private readonly thread: TextSearchThread | null;
  private readonly threadFrom: number;
  /** `rowsOf` statements by how many rowids they take */
  private readonly byRowids = new Map<number, ReturnType<Db['prepare']>>();
  private readonly dfCache = new Map<string, { n: number; until: number }>();
  private readonly filtered = new Map<string, Statement>();
  private readonly bm25: CachedBm25;

  constructor(
    private readonly db: Db,
    /** shared with the turn log, so a persist job's entry and its bookkeeping commit together */
    readonly writes: TransactionBatcher = new TransactionBatcher(db),
    options: SqliteLongTermOptions = {},
  ) {
    const threaded = options.textSearchThread ?? (!db.memory && !db.readonly && db.name !== '' && db.name !== ':memory:');
    this.thread = threaded ? new TextSearchThread(db.name, async (u, q, o) => this.searchTextSync(u, q, o)) : null;
    this.threadFrom = options.threadFrom ?? COMMON_TERM_DOCS;
    this.bm25 = new CachedBm25(db);
    this.s = {
      insert: db.prepare(
        `INSERT INTO entries (${COLUMNS}) VALUES (${ENTRY_VALUES}) ON CONFLICT DO NOTHING`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE user_id = ? AND id = ?`),
      turnHolds: db.prepare('SELECT 1 FROM turns WHERE user_id = ? AND id = ? AND content_hash = ?').pluck(),
      // weights: content 1, participant name 2, owner 0 (the owner column only narrows the match)
      fts: db.prepare(ftsSql('')),
      // the best-ranked matches of every user, no table read: the first step of `ranked`
      ftsTop: db.prepare('SELECT rowid, bm25(entries_fts, 1.0, 2.0, 0.0) AS r FROM entries_fts WHERE entries_fts MATCH ? ORDER BY r LIMIT ?').raw(),
      // newest first, bm25() computed only for the rows returned (see rankedNewest)
      ftsNewest: db.prepare('SELECT rowid, bm25(entries_fts, 1.0, 2.0, 0.0) AS r FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT ?').raw(),
      userCapped: db.prepare('SELECT count(*) FROM (SELECT 1 FROM entries WHERE user_id = ? LIMIT ?)').pluck(),
      cappedCount: db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?)'),
      like: db.prepare(likeSql('')),
      recent: db.prepare(recentSql('')),
      participants: db.prepare(
        `SELECT DISTINCT name FROM (SELECT name FROM entries WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?) WHERE name IS NOT NULL AND name != ''`,
      ).pluck(),
      update: db.prepare(
        `UPDATE entries SET content = coalesce(@content, content), content_hash = coalesce(@content_hash, content_hash),
           importance = coalesce(@importance, importance), pinned = coalesce(@pinned, pinned), updated_at = @updated_at
         WHERE user_id = @user_id AND id = @id`,
      ),
      delete: db.prepare('DELETE FROM entries WHERE user_id = ? AND id = ?'),
      deleteUser: db.prepare('DELETE FROM entries WHERE user_id = @user_id AND (@session_id IS NULL OR session_id = @session_id) RETURNING id'),
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

  persistTurn(entry: MemoryEntry): Promise<boolean> {
    // the check and the write in one transaction (the batcher's): a delete or edit of the turn commits
    // wholly before it (nothing is written) or wholly after (and then removes this entry too)
    return this.writes.run(() => {
      if (!this.s.turnHolds.get(entry.user_id, entry.id, entry.content_hash)) return false;
      this.insert(entry);
      return true;
    });
  }

  private insert(e: MemoryEntry): boolean {
    const info = this.s.insert.run(entryParams(e));
    return info.changes > 0;
  }

  async get(userId: string, id: string): Promise<MemoryEntry | null> {
    return this.getSync(userId, id);
  }

  getSync(userId: string, id: string): MemoryEntry | null {
    const row = this.s.get.get(userId, id) as EntryRow | undefined;
    return row ? rowToEntry(row) : null;
  }

  async searchText(userId: string, query: string, o: ListOptions): Promise<TextHit[]> {
    return this.thread && (this.threadFrom <= 0 || this.entriesCapped(userId) >= this.threadFrom)
      ? this.thread.search(userId, query, o)
      : this.searchTextSync(userId, query, o);
  }

  /** searchText on this thread and connection */
  searchTextSync(userId: string, query: string, o: ListOptions): TextHit[] {
    const { match, newest, owner, phrases } = this.matchFor(userId, query, new Set(o.speakerTerms ?? []));
    if (!match) return [];
    const plain = o.sessionId === undefined && o.createdFrom === undefined && o.createdBefore === undefined && isEmptyFilter(o.where);
    const fast = plain
      ? ((owner ? this.scoredHere(userId, owner, phrases, o.limit) : null) ?? (newest ? this.rankedNewest(userId, match, o.limit) : null) ?? this.ranked(userId, match, o.limit))
      : null;
    if (fast) return fast;
    const rows = this.statement(this.s.fts, ftsSql, o, 'e').all({ match, user_id: userId, session_id: o.sessionId ?? null, ...createdRange(o), limit: o.limit }) as Array<
      EntryRow & { rank: number }
    >;
    return rows.map((r) => ({ entry: rowToEntry(r), bm25: r.rank }));
  }

  /**
   * A small user's search (the owner clause) ranked by CachedBm25 instead of bm25(): the same scores,
   * without counting each word's rows of every user per query. Best first, ties in rowid order as
   * FTS5 returns them; null when the cached statistics are not current (or a word is more than one
   * token), and bm25() ranks.
   */
  private scoredHere(userId: string, owner: string, phrases: readonly Phrase[], limit: number): TextHit[] | null {
    if (!phrases.every((p) => singleToken(p.word))) return null;
    const scored = this.bm25.score(owner, phrases.map((p) => p.match));
    if (!scored) return null;
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return this.ownersOf(userId, scored.map(([rowid, score]) => [rowid, -score]), limit);
  }

  /**
   * The same answer as the joined `fts` statement, for a search with no filter but the owner, at
   * about half its cost: FTS5 ranks its matches alone and returns the best `RANKED_POOL` rowids, and
   * only those rows are read from `entries` (the joined form reads the row of every match before
   * sorting). Exact whenever the pool holds `limit` of the owner's rows — no row of the owner outside
   * it can rank above them — or holds every match; otherwise null, and the caller runs the joined form.
   */
  private ranked(userId: string, match: string, limit: number): TextHit[] | null {
    const pool = Math.max(RANKED_POOL, limit * 4);
    const top = this.s.ftsTop.all(match, pool) as Array<[number, number]>;
    if (top.length === 0) return [];
    const hits = this.ownersOf(userId, top, limit);
    return hits.length === limit || top.length < pool ? hits : null;
  }

  /**
   * For a user with many entries and a query whose words match more than SCORED_MATCHES of them: BM25
   * over the user's newest SCORED_MATCHES matches only. FTS5 computes bm25() for every row it returns,
   * so walking the matches newest first (rowid order, which it iterates natively) and stopping bounds
   * the cost — ~1.2 µs per scored row here, tens of milliseconds for a word in 10k entries — while
   * every word keeps its IDF over the whole index. Older matches are left to the semantic tier.
   * Null when the window holds fewer than `limit` of the user's entries (other users' newest rows
   * filled it): the caller ranks every match instead.
   */
  private rankedNewest(userId: string, match: string, limit: number): TextHit[] | null {
    const scored = this.s.ftsNewest.all(match, SCORED_MATCHES) as Array<[number, number]>;
    if (scored.length < SCORED_MATCHES) return null;
    scored.sort((a, b) => a[1] - b[1]);
    const hits = this.ownersOf(userId, scored, limit);
    return hits.length === limit ? hits : null;
  }

  /**
   * The first `limit` of the user's rows among ranked [rowid, bm25] pairs, best first. Rows are read
   * a few more than still wanted at a time: most rowids of a big user's matches are its own, and
   * reading a row (and parsing it) costs more than ranking it.
   */
  private ownersOf(userId: string, ranked: ReadonlyArray<[number, number]>, limit: number): TextHit[] {
    const hits: TextHit[] = [];
    for (let at = 0; at < ranked.length && hits.length < limit; ) {
      const chunk = ranked.slice(at, at + Math.max(8, Math.ceil((limit - hits.length) * 1.25)));
      at += chunk.length;
      const rows = this.rowsOf(chunk.map(([rowid]) => rowid));
      for (const [rowid, r] of chunk) {
        const row = rows.get(rowid);
        if (!row || row.user_id !== userId) continue;
        hits.push({ entry: rowToEntry(row), bm25: -r });
        if (hits.length === limit) break;
      }
    }
    return hits;
  }

  /** entries by rowid, in one statement */
  private rowsOf(rowids: readonly number[]): Map<number, EntryRow> {
    let st = this.byRowids.get(rowids.length);
    if (!st) {
      st = this.db.prepare(`SELECT rowid AS rowid_, ${COLUMNS} FROM entries WHERE rowid IN (${rowids.map(() => '?').join(', ')})`);
      if (this.byRowids.size < 64) this.byRowids.set(rowids.length, st);
    }
    const out = new Map<number, EntryRow>();
    for (const row of st.all(rowids) as Array<EntryRow & { rowid_: number }>) out.set(row.rowid_, row);
    return out;
  }

  /**
   * The MATCH expression of a user's query. FTS5 scores every posting of every query word before SQL
   * can filter by owner, so:
   * - a user with few entries: the owner's postings (see ownerClause) AND any of the words — FTS5
   *   intersects the lists and never touches other users' postings of a common word;
   * - a user with many (≥ COMMON_TERM_DOCS) entries: the owner clause narrows little, so instead the
   *   words found in COMMON_TERM_DOCS or more entries are dropped while a rarer word remains. Scoring
   *   every entry that holds a near-ubiquitous word costs tens of milliseconds and changes little of
   *   the ranking (its IDF is small), which the rarer words decide. When the words kept still match
   *   more than NEWEST_ABOVE entries, `newest` says so: rankedNewest scores a window of them.
   */
  private matchFor(userId: string, query: string, speakers: ReadonlySet<string>): { match: string; newest?: boolean; owner?: string; phrases: Phrase[] } {
    const phrases = queryTerms(query).map((t) => ({ word: t, match: speakers.has(t) ? `name : ${ftsString(t)}` : ftsString(t) }));
    const terms = phrases.map((p) => p.match);
    if (terms.length === 0) return { match: '', phrases };
    const owner = this.entriesCapped(userId) < COMMON_TERM_DOCS ? this.ownerClause(userId) : null;
    if (owner) return { match: `${owner} AND (${terms.join(' OR ')})`, owner, phrases };
    const rarer = terms.length > 1 ? terms.filter((t) => this.docsCapped(t) < COMMON_TERM_DOCS) : terms;
    const kept = rarer.length > 0 ? rarer : terms;
    const match = kept.join(' OR ');
    let matches = 0;
    for (const t of kept) matches += this.docsCapped(t);
    return { match, newest: matches > NEWEST_ABOVE, phrases };
  }

  /**
   * The clause that narrows a match to the owner's rows, or null when the id has no word to match. The
   * owner column holds the id as the tokenizer splits it, and an id's words are mostly shared ("user"
   * of "user-517" is in every row of a store whose ids look alike): FTS5 matches the phrase by reading
   * the positions of every row holding each word of it. The id's rarest word alone is one short
   * posting list — a superset of the owner's rows, which the caller's filter on entries.user_id narrows
   * to exactly them, so the answer is the phrase's (same rows, same bm25). Measured at 100k entries of
   * 1,000 users: `"tacos"` 1.15 → 0.15 ms, `"name" OR "puppy"` 2.6 → 1.6 ms of CPU. Only for ids in
   * ASCII, whose words the tokenizer splits exactly as OWNER_WORDS does; others keep the whole phrase.
   */
  private ownerClause(userId: string): string | null {
    const column = (w: string) => `user_id : ${ftsString(w)}`;
    if (/[^\x00-\x7f]/.test(userId)) return /[\p{L}\p{N}]/u.test(userId) ? column(userId) : null;
    const words = userId.match(OWNER_WORDS);
    if (!words) return null;
    if (words.length === 1) return column(words[0]!);
    let best = words[0]!;
    let fewest = Infinity;
    for (const w of new Set(words)) {
      const n = this.docsCapped(column(w));
      if (n < fewest) (best = w), (fewest = n);
    }
    return column(best);
  }

  /** min(the user's entries, COMMON_TERM_DOCS), cached like docsCapped: a range of the (user_id, created_at) index */
  private entriesCapped(userId: string): number {
    const key = `\u0000${userId}`;
    const now = Date.now();
    const hit = this.dfCache.get(key);
    if (hit && hit.until > now) return hit.n;
    const n = this.s.userCapped.get(userId, COMMON_TERM_DOCS) as number;
    if (this.dfCache.size >= DF_CACHE_SIZE) this.dfCache.clear();
    this.dfCache.set(key, { n, until: now + DF_CACHE_MS });
    return n;
  }

  /** min(documents matching, COMMON_TERM_DOCS), cached briefly: a capped count costs ~0.1 ms */
  private docsCapped(match: string): number {
    const now = Date.now();
    const hit = this.dfCache.get(match);
    if (hit && hit.until > now) return hit.n;
    const { n } = this.s.cappedCount.get(match, COMMON_TERM_DOCS) as { n: number };
    if (this.dfCache.size >= DF_CACHE_SIZE) this.dfCache.clear();
    this.dfCache.set(match, { n, until: now + DF_CACHE_MS });
    return n;
  }

  async searchSubstring(userId: string, q: string, o: ListOptions): Promise<MemoryEntry[]> {
    const rows = this.statement(this.s.like, likeSql, o).all({ user_id: userId, session_id: o.sessionId ?? null, pattern: likePattern(q), limit: o.limit });
    return (rows as EntryRow[]).map(rowToEntry);
  }

  async recent(userId: string, o: ListOptions): Promise<MemoryEntry[]> {
    const rows = this.statement(this.s.recent, recentSql, o).all({ user_id: userId, session_id: o.sessionId ?? null, ...createdRange(o), limit: o.limit });
    return (rows as EntryRow[]).map(rowToEntry);
  }

  async participants(userId: string, limit: number): Promise<string[]> {
    return this.s.participants.all(userId, limit) as string[];
  }

  /**
   * The statement for a read under `o.where`: the unfiltered one, or one with the filter's conditions
   * in its WHERE clause (so LIMIT counts matching entries only), bound to the filter's values.
   */
  private statement(plain: Statement, sql: (filter: string) => string, o: ListOptions, alias = ''): { all: (params: Record<string, unknown>) => unknown[] } {
    const f = filterSql(o.where, alias);
    if (f.sql === '') return plain;
    const text = sql(f.sql);
    let st = this.filtered.get(text);
    if (!st) {
      if (this.filtered.size >= FILTERED_CACHE) this.filtered.clear();
      this.filtered.set(text, (st = this.db.prepare(text)));
    }
    const bound = st;
    return { all: (params) => bound.all({ ...params, ...f.params }) };
  }

  async update(userId: string, id: string, patch: EntryPatch): Promise<MemoryEntry | null> {
    const info = this.s.update.run({
      user_id: userId,
      id,
      content: patch.content ?? null,
      content_hash: patch.content === undefined ? null : contentHash(patch.content),
      importance: patch.importance ?? null,
      pinned: patch.pinned === undefined ? null : patch.pinned ? 1 : 0,
      updated_at: new Date().toISOString(),
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

  async prune(c: PruneCriteria): Promise<MemoryRef[]> {
    const q = pruneWhere(c);
    if (!q) return [];
    return this.db.prepare(`DELETE FROM entries WHERE ${q.where} RETURNING user_id, id, session_id`).all(q.params) as MemoryRef[];
  }

  async deleteWhere(userId: string, sessionId?: string): Promise<string[]> {
    const rows = this.s.deleteUser.all({ user_id: userId, session_id: sessionId ?? null }) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  }

  async count(userId?: string): Promise<number> {
    const row = (userId === undefined ? this.s.count.get() : this.s.countUser.get(userId)) as { n: number };
    return row.n;
  }

  /** Ends the text-search thread (the database itself is closed by its owner). */
  async close(): Promise<void> {
    await this.thread?.close();
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
