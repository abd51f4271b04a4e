import type { Statement } from 'better-sqlite3';
import type { Filterable } from '../../domain/filters.js';
import type { Db } from './db.js';
import { bm25Idf, withoutCommon } from '../../retrieval/query-terms.js';
import { MatchRecords, type Match } from './match-records.js';
import type { EntryRow } from './rows/entries.js';
import { KeptPostings } from './kept-postings.js';
import { ascendingWithin, newestFirst, wholeList, type Descending } from './newest-first.js';
import { countAfter, LONG_ROW_TOKENS, repeatPattern } from './repeats.js';

// BM25 over one user's entries with that user's statistics only. FTS5's bm25() takes the row count,
// the average length and each word's document frequency from the whole table, so one tenant's scores
// moved with the words another tenant stored (issue 26). Here every input is the user's own: the
// entry count and total length from `text_stats` (kept by triggers on `entries`), a word's document
// frequency from the user's rows that FTS5 matches, a row's length (its text's bytes) and owner from
// `entry_sizes` (kept by triggers, migration 13). The formula is
// the PostgreSQL store's (k1 1.2, b 0.75, idf ln(1 + (N − df + 0.5)/(df + 0.5)); a content hit
// counts 1, a name hit 2), so both stores rank alike.
//
// A word's frequency in a row: in a long row (LONG_ROW_TOKENS words or more) the count recorded in
// `entry_repeats` at write time (src/adapters/sqlite/repeats.ts: words held more than once, by their
// light stem), in any other row — or for a word the record does not hold — 1 (a speaker's word: its
// weight). Not from FTS5: highlight() re-tokenised every matched row (tens of microseconds per long
// reply), and bm25(), whose ratio at two weightings gave the frequency, counts each phrase's rows in the
// whole table on its first call in a statement, so a tenant's query cost grew with every other
// tenant's words. Measured with `npm run eval -- --all --no-ablation`: generated 0.811, LoCoMo 0.753 /
// 0.752, RealMem 0.564 with FTS5's frequencies in long rows; 0.811, 0.753 / 0.752, 0.561 with the
// recorded ones; without frequencies at all RealMem drops to 0.533 (its long replies repeat what they
// are about).

const K1 = 1.2;
const B = 0.75;

/**
 * one query word: its FTS5 phrase (already narrowed to a column where needed), its weight (the
 * frequency of a hit not recorded otherwise), the key its count is recorded under (null: counted once)
 * and how much it counts in the query (1 for the query's own words; see ListOptions.expansion)
 */
export interface WeightedPhrase {
  match: string;
  weight: number;
  key: string | null;
  boost: number;
}

/**
 * What a search's conditions ask of a match (its session, role, kind, time and metadata, as its
 * `entry_sizes` record holds them: migration 18), tested on the attributes the connection keeps of
 * matched rows (MatchRecords); null: no condition.
 */
export type RowTest = ((row: Filterable) => boolean) | null;

/** the rowids a search's rows lie between, both included */
export interface RowidSpan {
  from: number;
  to: number;
}

/** how a search reads its matches (UserBm25.score) */
export interface SearchPlan {
  /** only the newest `rows` matches are scored (see score); `whole`: every row of the index is the user's, in this snapshot */
  newest?: { rows: number; dfOf: (match: string) => number; whole: boolean };
  span?: RowidSpan;
  common?: number;
  /**
   * With `common`: what an earlier search told of a phrase's matches. `isCommon`: it matched `common`
   * of the user's rows or more then, so it is not read unless no other phrase has matches;
   * `counted`: the matches of a phrase read now, at most `common`.
   */
  commonKnown?: { isCommon: (match: string) => boolean; counted: (match: string, n: number) => void };
  /**
   * When given, filled with the BM25 of the session of each row returned, the session read as one
   * document (sessionScores). Absent: no session is scored.
   */
  sessions?: Map<string, number>;
}

/** no bound: every rowid */
const ALL_ROWIDS: RowidSpan = { from: 0, to: Number.MAX_SAFE_INTEGER };

/**
 * phrase statements differ only in their limit, a small user's `common` (a share of its entry count):
 * as many as there are sizes of users. The least recently used goes; emptied whole at 64, the cache was
 * prepared again every other retrieve of the templated bench's 200 users (~30 µs a statement)
 */
const STATEMENTS = 256;

/** FTS5's record of the row count and the total tokens of each column (FTS5_AVERAGES_ROWID) */
const AVERAGES_ID = 1;

/** SQLite varints as FTS5 writes its sizes: big-endian groups of 7 bits, the ninth byte whole. */
function varints(buf: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 0; at < buf.length; ) {
    let v = 0;
    for (let n = 0; ; n++) {
      const byte = buf[at++]!;
      if (n === 8) {
        v = v * 256 + byte;
        break;
      }
      v = v * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    out.push(v);
  }
  return out;
}


/** one word's part of a document's score: its idf, its frequency there, the document's length and the average */
function termScore(idf: number, tf: number, length: number, avg: number): number {
  return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / avg));
}

/** whether [rowid, score] `a` ranks before `b`: the higher score, ties the newer row (as the PostgreSQL store orders them) */
const before = (a: readonly [number, number], b: readonly [number, number]) => a[1] > b[1] || (a[1] === b[1] && a[0] > b[0]);

/**
 * The best `top` of the scored rows, best first. Kept in order as they come, each placed by binary
 * search: a message's search scores ~1,500 rows for the 8–50 a retrieval asks of it, and sorting them
 * all was most of what ranking them cost.
 */
function best(scores: ReadonlyMap<number, number>, top: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  if (top <= 0) return out;
  for (const entry of scores) {
    if (out.length === top && !before(entry, out[top - 1]!)) continue;
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(out[mid]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    if (out.length === top) out.pop();
    out.splice(lo, 0, entry);
  }
  return out;
}

/** whether a row (its attributes; undefined: no such row) meets a search's conditions */
function meets(a: Filterable | undefined, test: NonNullable<RowTest>): boolean {
  return a !== undefined && test(a);
}

export class UserBm25 {
  private readonly stats: Statement;
  private readonly averages: Statement;
  /** a phrase's matches (see phraseStatement), by LIMIT (0: none; negative: the older ones newest first) */
  private readonly phrase = new Map<number, Statement>();
  /** each matched row's owner, length, session and recorded repeats, kept while no entry changes */
  private readonly rows: MatchRecords;
  /** each phrase's matches read by a search of the whole history, kept while no entry changes */
  private readonly postings = new KeptPostings();
  private readonly newestRow: Statement;
  /**
   * what searches derive from a phrase's matches, by the list of them: the same list search after
   * search while it is kept (KeptPostings), its rows' owners, lengths, sessions and records fixed as
   * long. The user's rows among them, and each one's recorded count of a word (NaN: none), by the
   * word's record pattern: words searched alike ("network'" and "network") read one list and count
   * apart.
   */
  private readonly derived = new WeakMap<readonly number[], { userId: string; matched: Match[]; counts: Map<string, Float64Array> }>();
  /** the ids and lengths of the given sessions (a JSON array of session_sizes ids) */
  private readonly sessionSizes: Statement;
  /** how many sessions a user's entries are in */
  private readonly sessionCount: Statement;

  constructor(private readonly db: Db) {
    this.stats = db.prepare('SELECT docs, bytes FROM text_stats WHERE user_id = ?').raw();
    this.averages = db.prepare('SELECT block FROM entries_fts_data WHERE id = ?').pluck();
    this.rows = new MatchRecords(db);
    this.newestRow = db.prepare('SELECT coalesce(max(rowid), 0) FROM entries').pluck();
    // each by its id, whatever the planner guesses of a small table (CROSS JOIN keeps the order)
    this.sessionSizes = db.prepare('SELECT s.id, s.session_id, s.bytes FROM json_each(@ids) j CROSS JOIN session_sizes s ON s.id = j.value').raw();
    this.sessionCount = db.prepare('SELECT sessions FROM session_counts WHERE user_id = ?').pluck();
  }

  /** entries' rows by rowid, kept while no entry changes (MatchRecords.entryRows); for the rows a search in this snapshot returned */
  entryRows(rowids: readonly number[], read: (rowids: readonly number[]) => ReadonlyMap<number, EntryRow>): Map<number, EntryRow> {
    return this.rows.entryRows(rowids, read);
  }

  /** the user's entry count and total bytes (0, 0 for a user with none) */
  userStats(userId: string): { docs: number; bytes: number } {
    const row = this.stats.get(userId) as [number, number] | undefined;
    return { docs: row?.[0] ?? 0, bytes: row?.[1] ?? 0 };
  }

  /** the rows of the whole text index (its averages record), 0 while it is empty */
  tableRows(): number {
    const block = this.averages.get(AVERAGES_ID) as Uint8Array | undefined;
    return block ? (varints(block)[0] ?? 0) : 0;
  }

  /**
   * [rowid, score] of the best `limit` of the user's entries holding any of `phrases` (their words
   * prefixed as the index holds the user's: owned-text.ts; entry_sizes.user_id decides a match's
   * owner) and meeting `test`; none of the rest is sorted. With `plan.newest`, only the user's newest `rows` matches meeting `test` are scored, and `dfOf` gives a
   * phrase's document frequency over all of the user's rows; otherwise it is counted from the matches,
   * and with `plan.common` a content phrase matching that many rows or more is left out while another
   * phrase has matches (query-terms' withoutCommon), its matches read no further than that.
   * `plan.span` bounds the rowids read when `newest` is given (rows outside it must not meet `test`).
   * Best first, ties newest first (as the PostgreSQL store orders them). Read in the caller's
   * transaction, so that the user's statistics and matches are of one state of the file (the store's
   * searchTextSync holds one over its word counts and this).
   */
  score(userId: string, given: readonly WeightedPhrase[], test: RowTest, limit: number, plan: SearchPlan = {}): Array<[number, number]> {
    const { docs, bytes } = this.userStats(userId);
    if (this.rows.refresh()) this.postings.clear();
    const { newest } = plan;
    const span = newest ? (plan.span ?? ALL_ROWIDS) : ALL_ROWIDS;
    if (docs === 0 || given.length === 0) return [];
    const avgdl = bytes / docs || 1;
    // a phrase's rowids alone, their records then taken from those kept (withSizes); over the whole
    // history, those read by earlier searches are kept (KeptPostings)
    const phrase = (match: string, limit: number, from: number, to: number) => JSON.parse(this.phraseStatement(limit).get({ match, floor: from, to }) as string) as number[];
    let newestRow: number | undefined;
    const kept = (match: string, limit: number) =>
      this.postings.matches(`${limit} ${match}`, (newestRow ??= this.newestRow.get() as number), limit, (after) => phrase(match, limit, after + 1, ALL_ROWIDS.to));
    let floor = span.from;
    let allowed: Set<number> | null = null;
    // with `newest`: each phrase's matches within the span, newest first, read down as far as the merge
    // needs (a named session's stretch is read alone and whole, never the whole history: plan.span)
    let within: Map<string, Descending> | null = null;
    if (newest) {
      within = new Map();
      const newestOf = (match: string) =>
        this.postings.newestOf(
          `newest ${match}`,
          (newestRow ??= this.newestRow.get() as number),
          (after) => phrase(match, 0, after + 1, ALL_ROWIDS.to),
          (below, n) => JSON.parse(this.phraseStatement(n, true).get({ match, below }) as string) as number[],
        );
      for (const { match } of given) if (!within.has(match)) within.set(match, plan.span ? wholeList(phrase(match, 0, span.from, span.to)) : newestOf(match));
      const found = this.newestMatches(userId, [...within.values()], span, test, newest);
      if (found.length === 0) return [];
      floor = found[found.length - 1]!;
      // every match from the floor up that meets the conditions is one of these: they are the rows
      // scored, and no row is tested again
      if (test) allowed = new Set(found);
    }
    // words searched alike (a query's "ab-cd" and "cd-ab": repeatKey tells them apart) are read once
    const reads = new Map<string, number[]>();
    const read = (p: WeightedPhrase, limit: number): number[] => {
      const key = `${limit} ${p.match}`;
      let rows = reads.get(key);
      if (!rows) {
        // with `newest`, the matches scored: from the floor up
        const list = within?.get(p.match);
        rows = list ? ascendingWithin(list, floor, span.to) : kept(p.match, limit);
        reads.set(key, rows);
      }
      return rows;
    };
    const common = newest ? undefined : plan.common;
    const cut = (p: WeightedPhrase) => (common !== undefined && p.key !== null ? common : 0);
    const known = common !== undefined ? plan.commonKnown : undefined;
    let phrases = given;
    // a phrase an earlier search found common is not read (null) until nothing rarer matches: its
    // `common` rows were a third of the rows a RealMem message's searches read, for words they then left out
    let found: Array<number[] | null> = given.map((p) => (known && p.key !== null && known.isCommon(p.match) ? null : read(p, cut(p))));
    if (common !== undefined) {
      given.forEach((p, i) => {
        if (p.key !== null && found[i]) known?.counted(p.match, found[i]!.length);
      });
      const kept = withoutCommon(given.map((p, i) => i), (i) => found[i]?.length ?? common, (i) => given[i]!.key === null, common);
      phrases = kept.map((i) => given[i]!);
      // a common phrase kept (nothing rarer matched) is read whole
      found = kept.map((i) => (found[i] === null || (found[i]!.length >= common && given[i]!.key !== null) ? read(given[i]!, 0) : found[i]!));
    }
    const matched = this.withSizes(userId, found as number[][]);
    // the matches meeting the conditions, each row read once: a row holding several of the query's
    // words was read again for each (RealMem: a query's ~2,500 matches of its words are far fewer rows)
    if (test && !allowed) {
      const rows = new Set<number>();
      for (const hits of matched) for (const [rowid] of hits) rows.add(rowid);
      const ids = [...rows];
      const attributes = this.rows.attributesOf(ids);
      allowed = new Set<number>();
      ids.forEach((rowid, i) => {
        if (meets(attributes[i], test)) allowed!.add(rowid);
      });
    }
    // a list kept between searches (KeptPostings) has its counts taken once, for every row, whatever
    // the conditions; one read for this search alone, for the rows that meet them
    const counted = !newest;
    this.loadRecords(phrases, found as number[][], matched, counted ? null : allowed);
    const scores = new Map<number, number>();
    // asked for sessions: each phrase's frequency by session, counted in the same pass (a row outside
    // the conditions adds 0, and its session still holds the word), and each matched row's session
    const tallies = plan.sessions ? phrases.map(() => new Map<number, number>()) : null;
    const sessionOf = new Map<number, number>();
    phrases.forEach((p, i) => {
      const hits = matched[i]!;
      const df = newest ? newest.dfOf(p.match) : hits.length;
      if (df === 0) return;
      // an added word counts as much as the query asks (WeightedPhrase.boost)
      const idf = bm25Idf(docs, df) * p.boost;
      const tally = tallies?.[i];
      // only a long row may hold a record (loadRecords)
      const pattern = p.key !== null ? repeatPattern(p.key) : null;
      const counts = pattern !== null && counted ? this.countsOf(found[i]!, pattern) : null;
      for (let j = 0; j < hits.length; j++) {
        const [rowid, length, session] = hits[j]!;
        const meets = !allowed || allowed.has(rowid);
        let tf = 0;
        if (meets) {
          const recorded = counts ? counts[j]! : pattern !== null && length >= LONG_ROW_TOKENS ? (countAfter(this.rows.record(rowid), pattern) ?? NaN) : NaN;
          tf = Number.isNaN(recorded) ? p.weight : recorded;
        }
        if (tally) {
          tally.set(session, (tally.get(session) ?? 0) + tf);
          sessionOf.set(rowid, session);
        }
        if (meets) scores.set(rowid, (scores.get(rowid) ?? 0) + termScore(idf, tf, length, avgdl));
      }
    });
    const ranked = best(scores, limit);
    if (plan.sessions && tallies) this.sessionScores(userId, bytes, phrases, tallies, ranked.map(([rowid]) => sessionOf.get(rowid)!), plan.sessions);
    return ranked;
  }

  /**
   * The user's newest `rows` matches within `span` meeting `test`, newest first, of the union of the
   * phrases' matches (`lists`, ascending), a chunk at a time: each match's owner and attributes are
   * taken from what the connection keeps of matched rows (MatchRecords). An FTS5 OR query walked newest
   * first instead decoded every phrase's matches again at each search (100k real turns of one user:
   * 0.6 ms plain, 2 ms with a `metadata` filter keeping a quarter; docs/bench-report.md, round 45).
   */
  private newestMatches(userId: string, lists: readonly Descending[], span: RowidSpan, test: RowTest, { rows, whole }: { rows: number; whole: boolean }): number[] {
    const out: number[] = [];
    const next = newestFirst(lists, span);
    // the next step reads what the share of matches kept so far says is still missing, and a quarter more
    for (let chunk = test ? 2 * rows : rows, read = 0; ; chunk = Math.ceil(((rows - out.length) * 1.25 * read) / Math.max(1, out.length))) {
      const ids = next(chunk);
      read += ids.length;
      // every row of the index is the user's (in this snapshot): no match's owner to look up
      const mine = whole ? null : this.rows.matchesOf(userId, [ids]);
      const owned = mine ? ids.filter((id) => mine.has(id)) : ids;
      const attributes = test ? this.rows.attributesOf(owned) : null;
      for (let i = 0; i < owned.length; i++) {
        if (attributes && !meets(attributes[i], test!)) continue;
        out.push(owned[i]!);
        if (out.length === rows) return out;
      }
      if (ids.length < chunk) return out;
    }
  }

  /**
   * BM25 of the given sessions, each read as one document: a word's frequency is its frequency summed
   * over the session's rows meeting the conditions (`tallies`, one per word), the length the session's
   * bytes, the document frequency the sessions among the word's matches (with `newest`, among those
   * read), the count and average length the user's sessions' (session_sizes, session_counts). A chat
   * message refers back to a conversation: one holding its words across many turns is what it means,
   * more than one turn repeating a rare word (RealMem dev, BM25 alone: 0.691 session R@8 over
   * sessions, 0.641 over turns spread over sessions). Only the sessions asked for are read: a big
   * user's query matches hundreds.
   */
  private sessionScores(userId: string, bytes: number, phrases: readonly WeightedPhrase[], tallies: ReadonlyArray<ReadonlyMap<number, number>>, wanted: readonly number[], out: Map<string, number>): void {
    if (wanted.length === 0) return;
    const sessions = Math.max(1, (this.sessionCount.get(userId) as number | undefined) ?? 0);
    const avg = bytes / sessions || 1;
    for (const [id, sessionId, length] of this.sessionSizes.all({ ids: JSON.stringify([...new Set(wanted)]) }) as Array<[number, string, number]>) {
      let score = 0;
      tallies.forEach((tally, i) => {
        const tf = tally.get(id) ?? 0;
        // the sessions holding the word, whether or not their rows meet the conditions (as a row's df)
        if (tf > 0) score += termScore(bm25Idf(sessions, tally.size) * phrases[i]!.boost, tf, length, avg);
      });
      out.set(sessionId, score);
    }
  }

  /**
   * Reads the recorded repeats of the matched rows that may hold a record (LONG_ROW_TOKENS words need
   * as many bytes), each row once and those kept (MatchRecords) not again. Joined to every match
   * instead, a long reply's record — hundreds of "word:count" — was copied out once per query word the
   * reply held: 1.3 of 4.5 ms a RealMem query.
   */
  private loadRecords(phrases: readonly WeightedPhrase[], found: ReadonlyArray<readonly number[]>, matched: ReadonlyArray<readonly Match[]>, allowed: ReadonlySet<number> | null): void {
    const long = new Set<number>();
    phrases.forEach((p, i) => {
      // counted already (countsOf): no record of its rows is read
      if (p.key === null || this.derived.get(found[i]!)?.counts.has(repeatPattern(p.key))) return;
      for (const [rowid, length] of matched[i]!) if (length >= LONG_ROW_TOKENS && (!allowed || allowed.has(rowid))) long.add(rowid);
    });
    if (long.size > 0) this.rows.loadRecords(long);
  }

  /**
   * The user's rows holding a phrase (all of them: its document frequency; or its first `limit`), as
   * rowids alone: each row's owner, length and session are then taken from what is kept of matched rows
   * (withSizes, MatchRecords: read once a row for all the phrases, and kept while no entry changes). No
   * entries row is read; a search's conditions are met once per matched row (`allowed`), a long row's
   * repeats once (loadRecords). The limit is written into the statement: bound as a parameter, it cost
   * more per row than it saved (RealMem dev, 581 queries: 3.9 ms a query against 3.1 written in).
   * Rowids come back as one JSON array: returned a row each, they cost better-sqlite3 more than FTS5
   * took to find them (1,143 matches of a word: 166 µs as rows, 95 as one array, 53 to count them).
   * `older`: the newest `limit` below rowid @below instead, newest first (FTS5 walks a word's matches
   * down from there: the newest 64 of 3,672 matches in 27 µs, all of them in 636).
   */
  private phraseStatement(limit: number, older = false): Statement {
    const key = older ? -limit : limit;
    let st = this.phrase.get(key);
    if (st) {
      // the newest use last: the first key is the least recently used
      this.phrase.delete(key);
      this.phrase.set(key, st);
    } else {
      const n = Math.floor(limit);
      const rows = older
        ? `AND f.rowid < @below ORDER BY f.rowid DESC LIMIT ${n}`
        : `AND f.rowid >= @floor AND f.rowid <= @to${limit > 0 ? ` LIMIT ${n}` : ''}`;
      st = this.db.prepare(`SELECT json_group_array(rowid) FROM (SELECT f.rowid FROM entries_fts f WHERE entries_fts MATCH @match ${rows})`).pluck();
      if (this.phrase.size >= STATEMENTS) this.phrase.delete(this.phrase.keys().next().value!);
      this.phrase.set(key, st);
    }
    return st;
  }

  /** each phrase's rowids as matches (rowid, length, session), the user's rows only (entry_sizes decides), each row read once */
  private withSizes(userId: string, found: ReadonlyArray<readonly number[]>): Match[][] {
    const held = found.map((list) => {
      const d = this.derived.get(list);
      return d !== undefined && d.userId === userId ? d.matched : undefined;
    });
    const unknown = found.filter((_, i) => held[i] === undefined);
    const mine = unknown.length > 0 ? this.rows.matchesOf(userId, unknown) : null;
    return found.map((list, i) => {
      if (held[i]) return held[i];
      const matched: Match[] = [];
      for (const rowid of list) {
        const m = mine!.get(rowid);
        if (m !== undefined) matched.push(m);
      }
      this.derived.set(list, { userId, matched, counts: new Map() });
      return matched;
    });
  }

  /** each of a list's matches' recorded count of the word (`pattern`: repeatPattern), NaN where none is; counted once a list, its records loaded (loadRecords) */
  private countsOf(list: readonly number[], pattern: string): Float64Array {
    const d = this.derived.get(list)!;
    let counts = d.counts.get(pattern);
    if (counts) return counts;
    counts = new Float64Array(d.matched.length).fill(Number.NaN);
    d.matched.forEach(([rowid, length], j) => {
      if (length >= LONG_ROW_TOKENS) counts![j] = countAfter(this.rows.record(rowid), pattern) ?? Number.NaN;
    });
    d.counts.set(pattern, counts);
    return counts;
  }

}
