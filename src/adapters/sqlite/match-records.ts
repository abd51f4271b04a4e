import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

// What a text search reads of each row a query word matches — its owner, length and session
// (`entry_sizes`) and a long row's recorded repeats (`entry_repeats`) — kept in memory by each
// connection. Those are fixed while the row's entry keeps its text, owner and session: a new entry is a
// new rowid, read when first matched. Every change of an entry's text, owner or session, and every
// delete (which could free its rowid for the next insert), adds one to `entry_changes` (migration 19)
// in the transaction of the write, whichever process writes; a search reads that count in its own
// snapshot and starts afresh when it moved, so nothing read here outlives the row it was read from.
// Measured on the realtext bench's as-is corpus (RealMem and LoCoMo dev, 200 queries): 1,367 rows
// read a retrieve were re-read by every search, a third of the text search's CPU (docs/bench-report.md,
// round 18).

/** a matched row: its rowid, its length in bytes and its session's key (session_sizes.id); as kept here, its owner after them */
export type Match = [rowid: number, length: number, session: number, ...owner: string[]];
/** a match as kept, with its owner */
type Owned = [rowid: number, length: number, session: number, owner: string];

/** rows kept (all users, ~100 bytes each), as two generations (see Recent) */
const MAX_ROWS = 200_000;
/** characters of recorded repeats kept (a long reply's record averages ~450 on RealMem) */
const MAX_RECORD_CHARS = 8_000_000;

/** how much is kept (the defaults above unless given) */
export interface MatchRecordLimits {
  rows?: number;
  recordChars?: number;
}

/**
 * What was used lately, by rowid, within a budget: once the newer generation holds half of it, the
 * older is dropped and the newer takes its place; a hit in the older moves the value to the newer. A
 * store whose users' rows outgrow the budget keeps its recent users' rows, where a map emptied whole
 * at its limit kept nearly nothing (100k real turns of 113 users: the records of ~40 million
 * characters cleared every ~25 queries).
 */
class Recent<V> {
  private young = new Map<number, V>();
  private old = new Map<number, V>();
  private weight = 0;

  constructor(
    private readonly budget: number,
    private readonly weigh: (v: V) => number,
  ) {}

  get(rowid: number): V | undefined {
    const v = this.young.get(rowid);
    if (v !== undefined) return v;
    const aged = this.old.get(rowid);
    if (aged !== undefined) this.set(rowid, aged);
    return aged;
  }

  set(rowid: number, v: V): void {
    this.young.set(rowid, v);
    this.weight += this.weigh(v);
    if (this.weight * 2 >= this.budget) {
      this.old = this.young;
      this.young = new Map();
      this.weight = 0;
    }
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
    this.weight = 0;
  }
}

export class MatchRecords {
  private readonly changes: Statement;
  private readonly sizes: Statement;
  private readonly repeats: Statement;
  /** the entry_changes count what is kept was read under (null: nothing read yet) */
  private version: number | null = null;
  private readonly rows: Recent<Owned>;
  /** a long row's record, or '' when it holds none */
  private readonly records: Recent<string>;

  constructor(db: Db, limits: MatchRecordLimits = {}) {
    this.rows = new Recent(limits.rows ?? MAX_ROWS, () => 1);
    // a row without a record weighs as one of a few words: many are kept, not without bound
    this.records = new Recent(limits.recordChars ?? MAX_RECORD_CHARS, (r) => Math.max(r.length, 16));
    this.changes = db.prepare('SELECT n FROM entry_changes WHERE id = 1').pluck();
    this.sizes = db.prepare('SELECT z.rowid, z.bytes, z.session, z.user_id FROM entry_sizes z WHERE z.rowid IN (SELECT value FROM json_each(@rows))').raw();
    this.repeats = db.prepare('SELECT r.rowid, r.repeats FROM entry_repeats r WHERE r.rowid IN (SELECT value FROM json_each(@rows))').raw();
  }

  /** Drops everything kept when an entry changed or went since it was read. Call in the search's transaction, first. */
  refresh(): void {
    const n = this.changes.get() as number;
    if (n === this.version) return;
    this.version = n;
    this.rows.clear();
    this.records.clear();
  }

  /** the user's rows among `lists` as matches, by rowid (a rowid that is not the user's is absent); each row read once, those kept not at all */
  matchesOf(userId: string, lists: ReadonlyArray<readonly number[]>): Map<number, Match> {
    const out = new Map<number, Match>();
    const wanted = new Set<number>();
    for (const list of lists) {
      for (const rowid of list) {
        if (out.has(rowid) || wanted.has(rowid)) continue;
        const m = this.rows.get(rowid);
        if (m === undefined) wanted.add(rowid);
        else if (m[3] === userId) out.set(rowid, m);
      }
    }
    if (wanted.size === 0) return out;
    for (const m of this.sizes.all({ rows: JSON.stringify([...wanted]) }) as Owned[]) {
      this.rows.set(m[0], m);
      if (m[3] === userId) out.set(m[0], m);
    }
    return out;
  }

  /** the recorded repeats of these rows, by rowid (a row holding none is absent); those kept not read again */
  recordsOf(rows: ReadonlySet<number>): Map<number, string> {
    const out = new Map<number, string>();
    const wanted: number[] = [];
    for (const rowid of rows) {
      const r = this.records.get(rowid);
      if (r === undefined) wanted.push(rowid);
      else if (r !== '') out.set(rowid, r);
    }
    if (wanted.length === 0) return out;
    for (const [rowid, r] of this.repeats.all({ rows: JSON.stringify(wanted) }) as Array<[number, string]>) out.set(rowid, r);
    for (const rowid of wanted) this.records.set(rowid, out.get(rowid) ?? '');
    return out;
  }
}
