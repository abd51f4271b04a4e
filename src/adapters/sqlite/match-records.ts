import type { Statement } from 'better-sqlite3';
import type { Filterable } from '../../domain/filters.js';
import type { Db } from './db.js';
import type { EntryRow } from './rows/entries.js';

// What a text search reads of each row a query word matches — its owner, length and session
// (`entry_sizes`) and a long row's recorded repeats (`entry_repeats`) — kept in memory by each
// connection. Those are fixed while the row's entry keeps its text, owner and session: a new entry is a
// new rowid, read when first matched. Every change of an entry's text, owner or session, and every
// delete (which could free its rowid for the next insert), adds one to `entry_changes` (migration 19)
// in the transaction of the write, whichever process writes; a search reads that count in its own
// snapshot and starts afresh when it moved, so nothing read here outlives the row it was read from.
// Measured on the realtext bench's as-is corpus (RealMem and LoCoMo dev, 200 queries): 1,367 rows
// read a retrieve were re-read by every search, a third of the text search's CPU (docs/bench-report.md,
// round 18). A filtered search also reads the attributes its conditions test (session, role, kind, time,
// metadata), kept the same way: tested again in SQL at every search, a big user's filtered walk paid a
// record lookup and its JSON calls for every match it passed (round 21). Migration 20 counts a change of
// any of those too.

/** a matched row: its rowid, its length in bytes and its session's key (session_sizes.id) */
export type Match = [rowid: number, length: number, session: number];

/** rows kept (all users): past it everything is dropped and read again (~80 bytes a row) */
const MAX_ROWS = 200_000;
/** characters of recorded repeats kept (a long reply's record averages ~450 on RealMem) */
const MAX_RECORD_CHARS = 8_000_000;

/** rows whose attributes are kept (all users; ~150 bytes a row) */
const MAX_ATTRIBUTE_ROWS = 200_000;

/**
 * characters of entries' rows kept (their text and name; see entryRows): what 200 searches of each
 * filter kind return over 100k real turns of 113 users is ~27 million, of which 8 million kept 17%
 * (everything is dropped when full: docs/bench-report.md, round 42)
 */
const MAX_ENTRY_CHARS = 32_000_000;
/** what a kept entry's row counts against MAX_ENTRY_CHARS beyond its text and name (its ids and times) */
const ENTRY_ROW_CHARS = 200;

/** what a long row holding no record counts against MAX_RECORD_CHARS */
const NO_RECORD_CHARS = 16;

const NONE: ReadonlyMap<number, Match> = new Map();

/** how much is kept (the defaults above unless given) */
export interface MatchRecordLimits {
  rows?: number;
  recordChars?: number;
  attributeRows?: number;
  entryChars?: number;
}

export class MatchRecords {
  private readonly changes: Statement;
  private readonly sizes: Statement;
  private readonly repeats: Statement;
  /** the entry_changes count the kept rows were read under (null: nothing read yet) */
  private version: number | null = null;
  private readonly byUser = new Map<string, Map<number, Match>>();
  private rows = 0;
  /** a long row's record, or null when it holds none */
  private readonly records = new Map<number, string | null>();
  private recordChars = 0;
  private readonly readAttributes: Statement;
  /** a row's session, role, kind, time and metadata (what a search's conditions test) */
  private readonly attributes = new Map<number, Filterable>();
  /** one string for the many rows holding the same session id, role or kind */
  private readonly shared = new Map<string, string>();
  private readonly metadataOf = new Map<string, Filterable['metadata']>();
  /** the entries' rows a search returned (see entryRows) */
  private readonly entries = new Map<number, EntryRow>();
  private entryChars = 0;
  private readonly maxEntryChars: number;
  private readonly maxRows: number;
  private readonly maxRecordChars: number;
  private readonly maxAttributeRows: number;

  constructor(db: Db, limits: MatchRecordLimits = {}) {
    this.maxRows = limits.rows ?? MAX_ROWS;
    this.maxRecordChars = limits.recordChars ?? MAX_RECORD_CHARS;
    this.maxAttributeRows = limits.attributeRows ?? MAX_ATTRIBUTE_ROWS;
    this.maxEntryChars = limits.entryChars ?? MAX_ENTRY_CHARS;
    this.changes = db.prepare('SELECT n FROM entry_changes WHERE id = 1').pluck();
    this.sizes = db.prepare('SELECT z.rowid, z.bytes, z.session, z.user_id FROM entry_sizes z WHERE z.rowid IN (SELECT value FROM json_each(@rows))').raw();
    this.repeats = db.prepare('SELECT r.rowid, r.repeats FROM entry_repeats r WHERE r.rowid IN (SELECT value FROM json_each(@rows))').raw();
    this.readAttributes = db.prepare('SELECT z.rowid, z.session_id, z.role, z.kind, z.created_at, z.metadata FROM json_each(@rows) j CROSS JOIN entry_sizes z ON z.rowid = j.value').raw();
  }

  /** Drops everything kept when an entry changed or went since it was read; true when it did. Call in the search's transaction, first. */
  refresh(): boolean {
    const n = this.changes.get() as number;
    if (n === this.version) return false;
    this.version = n;
    this.byUser.clear();
    this.rows = 0;
    this.records.clear();
    this.recordChars = 0;
    this.dropAttributes();
    this.entries.clear();
    this.entryChars = 0;
    return true;
  }

  /**
   * The entries' rows of these rowids, those not kept read by `read` and kept. A search returns much
   * the same rows search after search, and a row read afresh holds a text string never seen before:
   * what ranking derives from a text (retrieval/text-cache.ts) then hashed and compared every long
   * reply character by character to find it again. Kept, the row's text is the very same string.
   * Call after refresh, in the same snapshot.
   */
  entryRows(rowids: readonly number[], read: (rowids: readonly number[]) => ReadonlyMap<number, EntryRow>): Map<number, EntryRow> {
    const out = new Map<number, EntryRow>();
    const missing: number[] = [];
    for (const rowid of rowids) {
      const row = this.entries.get(rowid);
      if (row) out.set(rowid, row);
      else missing.push(rowid);
    }
    if (missing.length === 0) return out;
    for (const [rowid, row] of read(missing)) {
      out.set(rowid, row);
      const chars = row.content.length + (row.name?.length ?? 0) + ENTRY_ROW_CHARS;
      if (this.entryChars + chars > this.maxEntryChars) {
        this.entries.clear();
        this.entryChars = 0;
        if (chars > this.maxEntryChars) continue;
      }
      this.entries.set(rowid, row);
      this.entryChars += chars;
    }
    return out;
  }

  /** the user's rows among `lists` as matches, by rowid (a rowid that is not the user's is absent) */
  matchesOf(userId: string, lists: ReadonlyArray<readonly number[]>): ReadonlyMap<number, Match> {
    const mine = this.byUser.get(userId);
    const wanted = new Set<number>();
    for (const list of lists) for (const rowid of list) if (!mine?.has(rowid)) wanted.add(rowid);
    if (wanted.size === 0) return mine ?? NONE;
    if (this.rows + wanted.size > this.maxRows) {
      // what is read now must all be kept: the user's rows already known are read again
      this.byUser.clear();
      this.rows = 0;
      for (const list of lists) for (const rowid of list) wanted.add(rowid);
    }
    for (const [rowid, bytes, session, owner] of this.sizes.all({ rows: JSON.stringify([...wanted]) }) as Array<[number, number, number, string]>) {
      let of = this.byUser.get(owner);
      if (!of) this.byUser.set(owner, (of = new Map()));
      if (!of.has(rowid)) this.rows++;
      of.set(rowid, [rowid, bytes, session]);
    }
    return this.byUser.get(userId) ?? NONE;
  }

  /** reads the records of these rows that are not kept yet; `record` then answers for each of them */
  loadRecords(rows: ReadonlySet<number>): void {
    const wanted: number[] = [];
    for (const rowid of rows) if (!this.records.has(rowid)) wanted.push(rowid);
    if (wanted.length === 0) return;
    const found = this.repeats.all({ rows: JSON.stringify(wanted) }) as Array<[number, string]>;
    // a row holding no record weighs as a short one does: many are kept, not without bound
    let chars = (wanted.length - found.length) * NO_RECORD_CHARS;
    for (const [, r] of found) chars += r.length;
    if (this.recordChars + chars > this.maxRecordChars && this.records.size > 0) {
      // what is read now must all be answered for: the rows kept already are read again
      this.records.clear();
      this.recordChars = 0;
      return this.loadRecords(rows);
    }
    for (const rowid of wanted) this.records.set(rowid, null);
    for (const [rowid, r] of found) this.records.set(rowid, r);
    this.recordChars += chars;
  }

  /** the row's recorded repeats (null: none); for a row given to loadRecords since the last refresh */
  record(rowid: number): string | null {
    return this.records.get(rowid) ?? null;
  }

  /**
   * Each row's attributes, in the order of `rows` (undefined: no such row), those not kept yet read
   * and kept. One lookup a kept row: a big user's filtered search tests thousands of matches, and
   * looking each up once to find what to read, then again to test it, took ~12% of a serve process's
   * main thread at 16 connections on 100k real turns of one user (docs/bench-report.md, round 48).
   */
  attributesOf(rows: readonly number[]): Array<Filterable | undefined> {
    const out = new Array<Filterable | undefined>(rows.length);
    const missing: number[] = [];
    for (let i = 0; i < rows.length; i++) if ((out[i] = this.attributes.get(rows[i]!)) === undefined) missing.push(i);
    if (missing.length === 0) return out;
    if (this.attributes.size + missing.length > this.maxAttributeRows && this.attributes.size > 0) {
      // what is read now must all be answered for: the rows kept already are read again
      this.dropAttributes();
      return this.attributesOf(rows);
    }
    for (const [rowid, sessionId, role, kind, createdAt, metadata] of this.readAttributes.all({ rows: JSON.stringify(missing.map((i) => rows[i])) }) as Array<[number, string, string, string, string, string | null]>) {
      this.attributes.set(rowid, {
        session_id: this.sharedOf(sessionId),
        role: this.sharedOf(role) as Filterable['role'],
        kind: this.sharedOf(kind) as Filterable['kind'],
        created_at: createdAt,
        metadata: metadata === null ? undefined : this.parsed(metadata),
      });
    }
    for (const i of missing) out[i] = this.attributes.get(rows[i]!);
    return out;
  }

  private sharedOf(text: string): string {
    const kept = this.shared.get(text);
    if (kept !== undefined) return kept;
    this.shared.set(text, text);
    return text;
  }

  /** metadata read only, never changed: rows holding the same text share one parsed object */
  private parsed(text: string): Filterable['metadata'] {
    let m = this.metadataOf.get(text);
    if (m === undefined) this.metadataOf.set(text, (m = JSON.parse(text) as Filterable['metadata']));
    return m;
  }

  private dropAttributes(): void {
    this.attributes.clear();
    this.shared.clear();
    this.metadataOf.clear();
  }
}
