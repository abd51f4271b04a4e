import type { MemoryEntry } from '../../domain/entry.js';
import { contentHash } from '../../domain/hash.js';
import { bm25Idf, COMMON_TERM_DOCS, commonFrom, expansionTerms, queryTerms, withoutCommon } from '../../retrieval/query-terms.js';
import type { EntryPatch, ListOptions, LongTermStore, MemoryRef, PruneCriteria, TextHit, TextIndexMerge } from '../../ports/long-term.js';
import type { Postgres, Tx } from './pool.js';
import { Coalescer } from './coalesce.js';
import { bulkInsert, ENTRY_COLUMNS, entrySelect, likePattern, rowToEntry, scanBySeq, unnestRows } from './rows.js';
import { filterSql } from './filter-sql.js';

/** BM25 parameters, FTS5's defaults, so both backends rank alike */
const K1 = 1.2;
const B = 0.75;
/** a user's statistics are read again after this long however unchanged (entry_changes keeps an hour of rows) */
const STATS_MAX_AGE_MS = 30 * 60_000;
const CHANGES_KEPT = '1 hour';
const PRUNE_EVERY_MS = 10 * 60_000;
const CACHE_SIZE = 10_000;

/**
 * A user's BM25 statistics as of `snapshot` (a pg_snapshot, text) or later: valid while no entry_changes
 * row of the user has committed outside it. Each figure is loaded on first need.
 */
interface UserStats {
  snapshot: string;
  at: number;
  n?: number;
  avgLength?: number;
  /** how many sessions the user's entries are in */
  sessions?: number;
  df: Map<string, number>;
}

/** A lexeme as a tsquery operand: quoted, so user text is never read as query syntax. */
function tsLexeme(lex: string): string {
  return `'${lex.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

interface Term {
  lex: string;
  idf: number;
  /** a participant's name: matched in the name (weight A) only */
  nameOnly: boolean;
  /** how much it counts in the query: 1 for the query's own words, more with ListOptions.expansion */
  boost: number;
}

/** A term as a tsquery operand; a name-only one restricted to weight A (the name). */
function tsOperand(t: Pick<Term, 'lex' | 'nameOnly'>): string {
  return t.nameOnly ? `${tsLexeme(t.lex)}:A` : tsLexeme(t.lex);
}

/**
 * Long-term store on PostgreSQL. Text search is BM25 computed in SQL over the `tsv` column — the
 * formula FTS5 uses (k1 1.2, b 0.75; a participant-name hit weighs 2, a content hit 1; idf
 * ln(1 + (N − df + 0.5)/(df + 0.5))), with the user's own entry count and document frequencies,
 * so ranking does not depend on other tenants' data. PostgreSQL's own ts_rank has no idf: on the
 * eval it let a frequent word outrank the rare one a question turns on.
 *
 * As on SQLite, document frequencies are counted up to COMMON_TERM_DOCS, and the user's common content
 * words (query-terms' commonFrom: 15% of the user's entries, at most COMMON_TERM_DOCS) are left out of
 * the match while a rarer word remains: they say little of what an entry is about, and scoring every
 * entry holding them costs tens of milliseconds. The GIN index is over (user_id, tsv): a query reads
 * its user's postings only.
 *
 * The statistics (entry count, mean length, document frequencies: 14 ms each for a common word or the
 * count of a user of 100k entries) are kept per user with the snapshot they were read in, and every
 * search first asks, in one indexed lookup, whether a statement of any process has changed the user's
 * entries since (`entry_changes`, written by triggers in the writer's transaction): the figures are
 * exact whichever process wrote, as soon as its commit is visible. (Kept for a minute, they hid a word
 * a worker had just persisted from every API process: issue 26.)
 */
export class PostgresLongTermStore implements LongTermStore {
  readonly backend = 'postgres' as const;
  private readonly lexemes = new Map<string, string[]>();
  private readonly stats = new Map<string, UserStats>();
  private prunedAt = 0;
  private readonly persists = new Coalescer<MemoryEntry, boolean>((entries) => this.persistTurns(entries));

  constructor(private readonly pg: Postgres) {}

  /** returns the ids actually written (new) */
  async upsert(entries: readonly MemoryEntry[]): Promise<string[]> {
    return upsertIn(this.pg, entries);
  }

  /**
   * Writes the entry of a logged turn only while the turn log holds (user_id, id) with its
   * content_hash. The turn row is read FOR SHARE in the same statement: a delete or edit of the turn
   * either commits before (nothing is written) or waits for this write to commit (and then removes
   * the entry with the turn), so an erased turn never comes back as an entry. Concurrent calls (persist
   * jobs) share one statement.
   */
  persistTurn(entry: MemoryEntry): Promise<boolean> {
    return this.persists.call(entry);
  }

  private async persistTurns(entries: readonly MemoryEntry[]): Promise<boolean[]> {
    const input = unnestRows(ENTRY_COLUMNS, entries);
    // unflushed: the entry derives from a durable turn, and a crash that loses it loses the "persisted" after it too (Postgres.queryUnflushed)
    const rows = await this.pg.queryUnflushed<{ user_id: string; id: string; content_hash: string }>(
      `WITH input AS (${input.sql}),
            held AS (SELECT t.user_id, t.id, t.content_hash FROM turns t
                     JOIN (SELECT DISTINCT user_id, id, content_hash FROM input) i ON t.user_id = i.user_id AND t.id = i.id AND t.content_hash = i.content_hash
                     FOR SHARE OF t),
            written AS (INSERT INTO entries (${ENTRY_COLUMNS.join(', ')})
                        SELECT i.* FROM input i JOIN held h ON h.user_id = i.user_id AND h.id = i.id AND h.content_hash = i.content_hash
                        ON CONFLICT (user_id, id) DO NOTHING RETURNING 1)
       SELECT user_id, id, content_hash FROM held`,
      input.values,
    );
    const holds = new Set(rows.map((r) => `${r.user_id}\u0000${r.id}\u0000${r.content_hash}`));
    return entries.map((e) => holds.has(`${e.user_id}\u0000${e.id}\u0000${e.content_hash}`));
  }

  async get(userId: string, id: string): Promise<MemoryEntry | null> {
    const [row] = await this.pg.query(`SELECT ${entrySelect()} FROM entries WHERE user_id = $1 AND id = $2`, [userId, id]);
    return row ? rowToEntry(row) : null;
  }

  async searchText(userId: string, query: string, o: ListOptions): Promise<TextHit[]> {
    const stats = await this.statsOf(userId);
    const terms = await this.terms(userId, stats, query, new Set(o.speakerTerms ?? []), o.expansion);
    if (terms.length === 0) return [];
    const f = filterSql(o.where, 11, 'e.');
    // The matches are read as the plain search reads them, and the filter is applied to them: the
    // subquery with OFFSET 0 is never merged with the outer query nor given its conditions (PostgreSQL
    // does not push a condition into a subquery with a LIMIT or OFFSET), so the planner cannot drive
    // the search from a B-tree of entries (user and time, user and kind, user and session) and test
    // every row of the user in range against the tsquery. It chose that on a table not yet analyzed,
    // or whenever it guessed the tsquery to match more than it does: 3,000 rows of a user read for 12
    // matches (test/unit/adapters/postgres/long-term-filter-plan.test.ts).
    // tf: a name hit counts twice, a content hit once; a speaker's word counts in the name only
    const rows = await this.pg.query<Record<string, unknown> & { score: number }>(
      `WITH q AS (SELECT * FROM unnest($2::text[], $3::float8[], $10::bool[]) AS q(lex, idf, name_only))
       SELECT ${entrySelect('e.')}, s.score
       FROM (SELECT ${entrySelect()}, seq, tsv FROM entries WHERE user_id = $1 AND tsv @@ $5::tsquery OFFSET 0) e
       CROSS JOIN LATERAL (
         SELECT sum(q.idf * (x.tf * ${K1 + 1}) / (x.tf + ${K1} * (${1 - B} + ${B} * length(e.tsv) / $4::float8))) AS score
         FROM (SELECT u.lexeme, cardinality(array_positions(u.weights, 'A')) AS name_hits, cardinality(u.weights) AS hits FROM unnest(e.tsv) u) h
         JOIN q ON q.lex = h.lexeme
         CROSS JOIN LATERAL (SELECT CASE WHEN q.name_only THEN 2 * h.name_hits ELSE h.hits + h.name_hits END AS tf) x
       ) s
       WHERE ($6::text IS NULL OR e.session_id = $6)
         AND ($7::timestamptz IS NULL OR e.created_at >= $7) AND ($8::timestamptz IS NULL OR e.created_at < $8)${f.sql}
       ORDER BY s.score DESC, e.seq DESC LIMIT $9`,
      [
        userId,
        terms.map((t) => t.lex),
        terms.map((t) => t.idf * t.boost),
        await this.avgLength(userId, stats),
        terms.map(tsOperand).join(' | '),
        o.sessionId ?? null,
        o.createdFrom ?? null,
        o.createdBefore ?? null,
        o.limit,
        terms.map((t) => t.nameOnly),
        ...f.params,
      ],
    );
    const hits = rows.map((r) => ({ entry: rowToEntry(r), bm25: r.score }));
    if (!o.bySession || hits.length === 0) return hits;
    const sessions = await this.sessionScores(userId, stats, terms, o);
    return hits.map((h) => ({ ...h, session_bm25: sessions.get(h.entry.session_id) ?? 0 }));
  }

  /**
   * BM25 of each session holding a match, the session read as one document, as the SQLite store
   * scores it (src/adapters/sqlite/bm25.ts, sessionScores): a word's frequency summed over the
   * session's entries meeting the search's conditions, the session's length its entries' lengths, the
   * document frequency the sessions among the word's matches, the count and average length the user's
   * sessions'.
   */
  private async sessionScores(userId: string, stats: UserStats, terms: readonly Term[], o: ListOptions): Promise<Map<string, number>> {
    stats.sessions ??= (await this.pg.query<{ n: number }>('SELECT count(DISTINCT session_id)::int AS n FROM entries WHERE user_id = $1', [userId]))[0]!.n;
    const sessions = Math.max(1, stats.sessions);
    const avg = ((await this.avgLength(userId, stats)) * (stats.n ?? sessions)) / sessions;
    const f = filterSql(o.where, 11, 'e.');
    const rows = await this.pg.query<{ session_id: string; score: number }>(
      `WITH q AS (SELECT * FROM unnest($2::text[], $3::bool[], $10::float8[]) AS q(lex, name_only, boost)),
       m AS (SELECT e.session_id, e.tsv,
                    (($5::text IS NULL OR e.session_id = $5) AND ($6::timestamptz IS NULL OR e.created_at >= $6) AND ($7::timestamptz IS NULL OR e.created_at < $7)${f.sql}) AS ok
             FROM entries e WHERE e.user_id = $1 AND e.tsv @@ $4::tsquery OFFSET 0),
       h AS (SELECT m.session_id, q.lex, sum(CASE WHEN m.ok THEN x.tf ELSE 0 END)::float8 AS tf
             FROM m CROSS JOIN LATERAL unnest(m.tsv) u JOIN q ON q.lex = u.lexeme
             CROSS JOIN LATERAL (SELECT CASE WHEN q.name_only THEN 2 * cardinality(array_positions(u.weights, 'A'))
                                        ELSE cardinality(u.weights) + cardinality(array_positions(u.weights, 'A')) END AS tf) x
             GROUP BY m.session_id, q.lex),
       d AS (SELECT lex, count(*)::float8 AS df FROM h GROUP BY lex),
       l AS (SELECT e.session_id, sum(length(e.tsv))::float8 AS len FROM entries e
             WHERE e.user_id = $1 AND e.session_id IN (SELECT session_id FROM h WHERE tf > 0) GROUP BY e.session_id)
       SELECT h.session_id, sum(q.boost * ln(1 + (greatest($8::float8, d.df) - d.df + 0.5) / (d.df + 0.5)) * (h.tf * ${K1 + 1}) / (h.tf + ${K1} * (${1 - B} + ${B} * l.len / $9::float8)))::float8 AS score
       FROM h JOIN d ON d.lex = h.lex JOIN q ON q.lex = h.lex JOIN l ON l.session_id = h.session_id WHERE h.tf > 0 GROUP BY h.session_id`,
      [
        userId,
        terms.map((t) => t.lex),
        terms.map((t) => t.nameOnly),
        terms.map(tsOperand).join(' | '),
        o.sessionId ?? null,
        o.createdFrom ?? null,
        o.createdBefore ?? null,
        sessions,
        avg || 1,
        terms.map((t) => t.boost),
        ...f.params,
      ],
    );
    return new Map(rows.map((r) => [r.session_id, r.score]));
  }

  /**
   * The lexemes of the query's words (through the index's own text-search configuration) with their
   * idf for this user; the user's common ones left out while a rarer one remains (withoutCommon). A
   * lexeme only `speakers` words give is matched in the participant name only (`nameOnly`), as the
   * port asks.
   */
  private async terms(userId: string, stats: UserStats, query: string, speakers: ReadonlySet<string>, expansion: ListOptions['expansion'] = []): Promise<Term[]> {
    const own = queryTerms(query);
    const added = expansionTerms(expansion);
    const words = [...new Set([...own, ...added.keys()])];
    if (words.length === 0) return [];
    const missing = words.filter((w) => !this.lexemes.has(w));
    if (missing.length > 0) {
      const rows = await this.pg.query<{ w: string; lex: string[] }>(
        "SELECT w, tsvector_to_array(to_tsvector('nc_english', w)) AS lex FROM unnest($1::text[]) w",
        [missing],
      );
      if (this.lexemes.size + rows.length > CACHE_SIZE) this.lexemes.clear();
      for (const r of rows) this.lexemes.set(r.w, r.lex);
    }
    // a lexeme is a speaker's only when every query word it comes from is one
    const nameOnly = new Map<string, boolean>();
    for (const w of words) for (const lex of this.lexemes.get(w) ?? []) nameOnly.set(lex, (nameOnly.get(lex) ?? true) && speakers.has(w));
    // a lexeme of the query's own words counts 1, and what expansion words add to it
    const boost = new Map<string, number>();
    for (const w of own) for (const lex of this.lexemes.get(w) ?? []) boost.set(lex, 1);
    for (const [w, weight] of added) for (const lex of this.lexemes.get(w) ?? []) boost.set(lex, (boost.get(lex) ?? 0) + weight);
    const lexemes = [...nameOnly.keys()];
    if (lexemes.length === 0) return [];
    stats.n ??= (await this.pg.query<{ n: number }>('SELECT count(*) AS n FROM entries WHERE user_id = $1', [userId]))[0]!.n;
    const n = stats.n;
    const df = await Promise.all(
      lexemes.map(async (lex) => {
        const operand = tsOperand({ lex, nameOnly: nameOnly.get(lex)! });
        const known = stats.df.get(operand);
        if (known !== undefined) return known;
        const [r] = await this.pg.query<{ n: number }>(
          'SELECT count(*) AS n FROM (SELECT 1 FROM entries WHERE user_id = $1 AND tsv @@ $2::tsquery LIMIT $3) m',
          [userId, operand, COMMON_TERM_DOCS],
        );
        if (stats.df.size >= CACHE_SIZE) stats.df.clear();
        stats.df.set(operand, r!.n);
        return r!.n;
      }),
    );
    const all = lexemes.map((lex, i) => ({ lex, nameOnly: nameOnly.get(lex)!, boost: boost.get(lex)!, df: df[i]!, idf: bm25Idf(n, df[i]!) }));
    return withoutCommon(all.filter((t) => t.df > 0), (t) => t.df, (t) => t.nameOnly, commonFrom(n));
  }

  /** the user's mean document length in lexemes, from a sample (BM25's length normalisation) */
  private async avgLength(userId: string, stats: UserStats): Promise<number> {
    if (stats.avgLength === undefined) {
      const [r] = await this.pg.query<{ l: number | null }>(
        'SELECT avg(length(tsv))::float8 AS l FROM (SELECT tsv FROM entries WHERE user_id = $1 LIMIT 1000) s',
        [userId],
      );
      stats.avgLength = Math.max(1, r!.l ?? 1);
    }
    return stats.avgLength;
  }

  /**
   * The user's statistics, checked against entry_changes: kept while no change of the user's entries
   * has committed outside their snapshot, else started afresh from the snapshot of this check (every
   * figure is then read by a later statement, so it sees at least what that snapshot saw: a change
   * committed in between makes the next check start afresh again, never keeps an older figure).
   */
  private async statsOf(userId: string): Promise<UserStats> {
    const now = Date.now();
    if (now - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = now;
      // best effort: a failed prune leaves rows for the next one, and no statistics outlive them
      void this.pg.run(`DELETE FROM entry_changes WHERE at < now() - interval '${CHANGES_KEPT}'`).catch(() => {});
    }
    const held = this.stats.get(userId);
    if (held && now - held.at < STATS_MAX_AGE_MS) {
      const [r] = await this.pg.query<{ snapshot: string; changed: boolean }>(
        `SELECT pg_current_snapshot()::text AS snapshot, EXISTS (
           SELECT 1 FROM entry_changes WHERE user_id = $1 AND xid >= pg_snapshot_xmin($2::pg_snapshot) AND NOT pg_visible_in_snapshot(xid, $2::pg_snapshot)
         ) AS changed`,
        [userId, held.snapshot],
      );
      if (!r!.changed) return held;
      return this.fresh(userId, r!.snapshot, now);
    }
    const [r] = await this.pg.query<{ snapshot: string }>('SELECT pg_current_snapshot()::text AS snapshot');
    return this.fresh(userId, r!.snapshot, now);
  }

  private fresh(userId: string, snapshot: string, at: number): UserStats {
    const stats: UserStats = { snapshot, at, df: new Map() };
    if (this.stats.size >= CACHE_SIZE) this.stats.clear();
    this.stats.set(userId, stats);
    return stats;
  }

  async searchSubstring(userId: string, q: string, o: ListOptions): Promise<MemoryEntry[]> {
    const f = filterSql(o.where, 5);
    const rows = await this.pg.query(
      `SELECT ${entrySelect()} FROM entries WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2)
         AND (content ILIKE $3 OR coalesce(name, '') ILIKE $3)${f.sql} ORDER BY created_at DESC, seq DESC LIMIT $4`,
      [userId, o.sessionId ?? null, likePattern(q), o.limit, ...f.params],
    );
    return rows.map(rowToEntry);
  }

  async recent(userId: string, o: ListOptions): Promise<MemoryEntry[]> {
    const f = filterSql(o.where, 6);
    const rows = await this.pg.query(
      `SELECT ${entrySelect()} FROM entries WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2)
         AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)${f.sql}
       ORDER BY created_at DESC, seq DESC LIMIT $5`,
      [userId, o.sessionId ?? null, o.createdFrom ?? null, o.createdBefore ?? null, o.limit, ...f.params],
    );
    return rows.map(rowToEntry);
  }

  async participants(userId: string, limit: number): Promise<string[]> {
    // the newest entries through the (user_id, created_at, seq) index, read backwards; only their names leave the server
    const rows = await this.pg.query<{ name: string }>(
      `SELECT DISTINCT name FROM (SELECT name FROM entries WHERE user_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2) s WHERE name IS NOT NULL AND name <> ''`,
      [userId, limit],
    );
    return rows.map((r) => r.name);
  }

  async update(userId: string, id: string, patch: EntryPatch): Promise<MemoryEntry | null> {
    const [row] = await this.pg.query(
      `UPDATE entries SET content = coalesce($3, content), content_hash = coalesce($4, content_hash),
         importance = coalesce($5, importance), pinned = coalesce($6, pinned), updated_at = $7
       WHERE user_id = $1 AND id = $2 RETURNING ${entrySelect()}`,
      [userId, id, patch.content ?? null, patch.content === undefined ? null : contentHash(patch.content), patch.importance ?? null, patch.pinned ?? null, new Date().toISOString()],
    );
    return row ? rowToEntry(row) : null;
  }

  async delete(userId: string, ids: readonly string[]): Promise<number> {
    return this.pg.run('DELETE FROM entries WHERE user_id = $1 AND id = ANY($2::text[])', [userId, ids]);
  }

  /** deletes matching unpinned entries (one user's, or every user's); no criterion deletes nothing (the user is a scope, not a criterion) */
  async prune(c: PruneCriteria): Promise<MemoryRef[]> {
    if (c.olderThanDays === undefined && c.belowImportance === undefined && c.sessionId === undefined) return [];
    return this.pg.query<MemoryRef>(
      `DELETE FROM entries WHERE NOT pinned AND ($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR session_id = $2)
         AND ($3::timestamptz IS NULL OR created_at < $3) AND ($4::float8 IS NULL OR importance < $4)
       RETURNING user_id, id, session_id`,
      [
        c.userId ?? null,
        c.sessionId ?? null,
        c.olderThanDays === undefined ? null : new Date(Date.now() - c.olderThanDays * 86_400_000).toISOString(),
        c.belowImportance ?? null,
      ],
    );
  }

  async deleteWhere(userId: string, sessionId?: string): Promise<string[]> {
    const rows = await this.pg.query<{ id: string }>('DELETE FROM entries WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2) RETURNING id', [userId, sessionId ?? null]);
    return rows.map((r) => r.id);
  }

  async count(userId?: string): Promise<number> {
    const [row] = await this.pg.query<{ n: number }>('SELECT count(*) AS n FROM entries WHERE ($1::text IS NULL OR user_id = $1)', [userId ?? null]);
    return row!.n;
  }

  /**
   * Moves the rows written since the last vacuum from the GIN index's pending list into the index
   * proper, where a search reads them by word instead of scanning the list whole (autovacuum does the
   * same, when it gets to the table). The function returns the pages it emptied; none are left.
   */
  async mergeTextIndex(): Promise<TextIndexMerge> {
    const t0 = performance.now();
    const [row] = await this.pg.query<{ pages: string }>("SELECT gin_clean_pending_list('entries_fts'::regclass) AS pages");
    return { parts_before: Number(row!.pages), parts_after: 0, ms: performance.now() - t0 };
  }

  /** Pages through every entry in insertion order (memory reindex, export). */
  scan(batch = 1000, userId?: string): AsyncGenerator<MemoryEntry[]> {
    return scanBySeq(this.pg, 'entries', entrySelect(), rowToEntry, batch, userId);
  }
}

/** Writes the entries whose (user_id, id) is not held yet, on the pool or in the caller's transaction; returns their ids. */
export async function upsertIn(db: Pick<Tx, 'query'>, entries: readonly MemoryEntry[]): Promise<string[]> {
  if (entries.length === 0) return [];
  const { sql, values } = bulkInsert('entries', ENTRY_COLUMNS, entries);
  const rows = await db.query<{ user_id: string; id: string }>(`${sql} ON CONFLICT (user_id, id) DO NOTHING RETURNING user_id, id`, values);
  const written = new Set(rows.map((r) => `${r.user_id}\u0000${r.id}`));
  return entries.filter((e) => written.has(`${e.user_id}\u0000${e.id}`)).map((e) => e.id);
}
