import type { Db } from './db.js';

// FTS5's bm25() (fts5_aux.c), computed here from the same inputs so that the collection statistics
// can be kept between queries. bm25() counts, for every phrase of every query, the rows of the whole
// table holding it (a walk over the word's postings of every user): at 1,000 users that walk was
// about half of a small user's text search, whose own matched rows are a handful.

const K1 = 1.2;
const B = 0.75;
/** bm25()'s floor for the IDF of a phrase in more than half of the rows */
const MIN_IDF = 1e-6;
/** the weights every ranked query of the long-term store passes to bm25(): content, name, owner */
const CONTENT_WEIGHT = 1;
const NAME_WEIGHT = 2;
/** phrases whose IDF is kept for the current state of the table */
const IDF_CACHE = 10_000;
/** FTS5's record of the row count and the total tokens of each column (FTS5_AVERAGES_ROWID) */
const AVERAGES_ID = 1;
const MARK = '\u0001';

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

/** A single-token query word (the tokenizer keeps ASCII letters and digits as one token, whatever the stemmer does with it). */
export function singleToken(word: string): boolean {
  return /^[A-Za-z0-9]+$/.test(word);
}

/**
 * BM25 over `entries_fts` exactly as `bm25(entries_fts, 1.0, 2.0, 0.0)` scores a row of a match
 * `owner AND (p1 OR p2 …)` — the same formula, inputs and order of operations — with the table's row
 * count, average length and each phrase's document count kept while nothing is written. A phrase's
 * frequency in a row is read from highlight() (the characters it adds to each weighted column: one
 * mark per instance of a one-token phrase), the row's length from the docsize table. Any commit, on
 * this connection or another, drops what is kept; the first search after it returns null and the
 * caller uses bm25(), so a store under steady writes costs what it did; so does a search inside a
 * transaction of this connection.
 */
export class CachedBm25 {
  private readonly s;
  private version = '';
  private stats: { rows: number; avgdl: number } | null = null;
  /** rows holding the phrase, and its IDF, by phrase */
  private readonly idfs = new Map<string, { rows: number; idf: number }>();

  constructor(private readonly db: Db) {
    this.s = {
      version: db.prepare('SELECT total_changes(), data_version FROM pragma_data_version').raw(),
      averages: db.prepare('SELECT block FROM entries_fts_data WHERE id = ?').pluck(),
      // the IDF as bm25() computes it, through SQLite's ln() (C's log(): V8's Math.log differs from it
      // in the last bit for some arguments)
      idf: db.prepare('SELECT n, ln((@rows - n + 0.5) / (n + 0.5)) FROM (SELECT count(*) AS n FROM entries_fts WHERE entries_fts MATCH @phrase)').raw(),
      length: db.prepare('SELECT sz FROM entries_fts_docsize WHERE id = ?').pluck(),
      instances: db
        .prepare(
          `SELECT rowid, length(coalesce(highlight(entries_fts, 0, '${MARK}', ''), '')) - length(coalesce(content, '')),
             length(coalesce(highlight(entries_fts, 1, '${MARK}', ''), '')) - length(coalesce(name, ''))
           FROM entries_fts WHERE entries_fts MATCH ?`,
        )
        .raw(),
    };
  }

  /**
   * [rowid, bm25] (bm25() negated: higher is better) of every row matching `owner AND (phrases…)`, or
   * null when the table changed since the previous call (or during this one). `owner` is a phrase of
   * the owner column (weight 0); each of `phrases` is one quoted single-token word, optionally with a
   * column filter (`name : "w"`).
   */
  score(owner: string, phrases: readonly string[]): Array<[number, number]> | null {
    // inside a transaction of this connection, statistics read now could outlive a rollback that no
    // counter would show
    if (this.db.inTransaction) return null;
    const before = this.current();
    if (before !== this.version) {
      this.version = before;
      this.stats = null;
      this.idfs.clear();
      return null;
    }
    const stats = (this.stats ??= this.readStats());
    const idf = phrases.map((p) => this.idfOf(p, stats.rows));
    const freqs = new Map<number, Float64Array>();
    phrases.forEach((p, i) => {
      // a word in no row (most joined compounds) is in none of the owner's
      if (idf[i]!.rows === 0) return;
      for (const [rowid, content, name] of this.s.instances.all(`${owner} AND ${p}`) as Array<[number, number, number]>) {
        let f = freqs.get(rowid);
        if (!f) freqs.set(rowid, (f = new Float64Array(phrases.length)));
        f[i] = content * CONTENT_WEIGHT + name * NAME_WEIGHT;
      }
    });
    const out: Array<[number, number]> = [];
    for (const [rowid, f] of freqs) {
      const d = this.lengthOf(rowid);
      // the owner phrase comes first in bm25()'s sum and adds 0 (its column weighs 0)
      let score = 0;
      for (let i = 0; i < f.length; i++) score += idf[i]!.idf * ((f[i]! * (K1 + 1.0)) / (f[i]! + K1 * (1 - B + (B * d) / stats.avgdl)));
      out.push([rowid, score]);
    }
    return this.current() === before ? out : null;
  }

  private current(): string {
    const [changes, dataVersion] = this.s.version.get() as [number, number];
    return `${changes}:${dataVersion}`;
  }

  private readStats(): { rows: number; avgdl: number } {
    const block = this.s.averages.get(AVERAGES_ID) as Uint8Array | undefined;
    const [rows = 0, ...columns] = block ? varints(block) : [];
    let tokens = 0;
    for (const c of columns) tokens += c;
    return { rows, avgdl: rows > 0 ? tokens / rows : 0 };
  }

  private idfOf(phrase: string, rows: number): { rows: number; idf: number } {
    let hit = this.idfs.get(phrase);
    if (hit === undefined) {
      const [n, x] = this.s.idf.get({ rows, phrase }) as [number, number | null];
      hit = { rows: n, idf: x === null || x <= 0 ? MIN_IDF : x };
      if (this.idfs.size >= IDF_CACHE) this.idfs.clear();
      this.idfs.set(phrase, hit);
    }
    return hit;
  }

  /** the row's length in tokens, every column (bm25()'s xColumnSize(-1)) */
  private lengthOf(rowid: number): number {
    const sz = this.s.length.get(rowid) as Uint8Array | undefined;
    let n = 0;
    if (sz) for (const c of varints(sz)) n += c;
    return n;
  }
}
