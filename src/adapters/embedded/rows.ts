import type { Statement } from 'better-sqlite3';
import type { RecordFilter } from '../../domain/filters.js';
import { giveTurn } from '../../pace.js';
import { atomically, type Db } from '../sqlite/db.js';
import { filterSql } from '../sqlite/filter-sql.js';
import type { TransactionBatcher } from '../sqlite/transaction-batcher.js';
import type { EmbedderTag, VectorFilter, VectorPayload, VectorPoint } from '../../ports/vector-index.js';
import { ChangeLog } from './change-log.js';
import { lastParts } from '../vector-parts.js';
import { pruneStep, type Change, type ChangeRange, type FullRow, type IndexRow, type LoadPut, type RemovedRow, type VectorStore, type Written } from './store.js';

/**
 * a candidate's row as `byRowids` reads it: an array in this order, not an object per row (44 rows a
 * search; building each as a named-column object, then its payload from that, was a third of the read)
 */
type StoredRow = [
  rowid: number, id: string, part: number, embedder: string, user_id: string, session_id: string, role: VectorPayload['role'], name: string | null,
  kind: VectorPayload['kind'], content: string, content_hash: string, created_at: string, metadata: string | null, vector: Buffer,
];

/**
 * rows a page of `load` reads: 20–50 µs each (the vector's blob copied, converted and quantized; the
 * most in a fresh process, its code not yet compiled), 5–13 ms a page
 */
const LOAD_PAGE = 256;
/** sessions a load counts the vectors of at a time (SqliteVectorStore.usersOf) */
const COUNT_PAGE = 500;

const PAYLOAD = 'user_id, session_id, role, name, kind, content, content_hash, created_at, metadata';

/** float32 little-endian, as stored; copied when the blob is not 4-byte aligned */
export function toFloat32(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  const copy = new Float32Array(blob.byteLength / 4);
  new Uint8Array(copy.buffer).set(blob);
  return copy;
}

export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * The statements over the `vectors` table (migration 15: one row per memory, embedder and part — the
 * whole text, and each passage of a long turn), prepared once. Every write here is also recorded in `vector_changes` by the table's triggers.
 */
class VectorRows {
  private readonly s;
  /** `byRowids` statements by how many rowids they take (a search asks for the same few counts) */
  private readonly byRowidsOf = new Map<number, ReturnType<Db['prepare']>>();
  private readonly filtered = new Map<string, Statement>();

  constructor(private readonly db: Db) {
    this.s = {
      upsert: db.prepare(
        `INSERT INTO vectors (id, embedder, part, dim, ${PAYLOAD}, vector)
         VALUES (@id, @embedder, @part, @dim, @user_id, @session_id, @role, @name, @kind, @content, @content_hash, @created_at, @metadata, @vector)
         ON CONFLICT (user_id, id, embedder, part) DO UPDATE SET dim = excluded.dim, session_id = excluded.session_id,
           role = excluded.role, name = excluded.name, kind = excluded.kind, content = excluded.content,
           content_hash = excluded.content_hash, created_at = excluded.created_at, metadata = excluded.metadata, vector = excluded.vector
         RETURNING rowid`,
      ),
      // the passages an upsert of fewer parts leaves behind (an edit to a shorter text)
      trimParts: db.prepare('DELETE FROM vectors WHERE user_id = ? AND id = ? AND embedder = ? AND part > ?'),
      current: db.prepare('SELECT rowid, id, part, user_id, session_id, created_at, vector FROM vectors WHERE user_id = ? AND id = ? AND embedder = ?'),
      // by the rowid's b-tree from where the last page ended (`+embedder`: through vectors_filter, each
      // page read every row of the embedder and sorted them)
      ofEmbedder: db.prepare('SELECT rowid, id, user_id, session_id, vector, part, created_at FROM vectors WHERE rowid > @after AND +embedder = @embedder AND dim = @dim ORDER BY rowid LIMIT @rows').raw(),
      // a page of (user, session) counts after a cursor, covered by vectors_filter and read in its order:
      // a range of the index, no table reads, stopped at the page's end
      sessionsOf: db.prepare(
        `SELECT user_id, session_id, count(*) AS n FROM vectors WHERE embedder = @embedder AND (user_id, session_id) > (@user_id, @session_id)
         GROUP BY user_id, session_id ORDER BY user_id, session_id LIMIT @limit`,
      ).raw(),
      whole: db.prepare(`SELECT rowid, id, part, embedder, ${PAYLOAD}, vector FROM vectors WHERE user_id = ? AND id = ? AND embedder = ? AND part = 0`).raw(),
      has: db.prepare('SELECT 1 FROM vectors WHERE user_id = ? AND id = ? AND embedder = ? AND part = 0').pluck(),
      delete: db.prepare('DELETE FROM vectors WHERE user_id = ? AND id = ? RETURNING user_id, id, embedder'),
      deleteUser: db.prepare('DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors WHERE user_id = ? LIMIT ?) RETURNING user_id, id, embedder'),
      // a session's rows through vectors_filter (embedder, user_id, session_id, …), for each embedder
      // held (a loose index scan: one seek each); `@session_id IS NULL OR …` read every vector of the
      // user, text and all (100k: 625 ms to find a session's 27, 1.3 ms so)
      deleteSession: db.prepare(
        `DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors WHERE embedder IN (
           WITH RECURSIVE held(embedder) AS (
             SELECT min(embedder) FROM vectors
             UNION ALL SELECT (SELECT min(embedder) FROM vectors WHERE embedder > held.embedder) FROM held WHERE held.embedder IS NOT NULL)
           SELECT embedder FROM held WHERE embedder IS NOT NULL)
         AND user_id = ? AND session_id = ? LIMIT ?) RETURNING user_id, id, embedder`,
      ),
      deleteAll: db.prepare('DELETE FROM vectors'),
      deleteOthers: db.prepare('DELETE FROM vectors WHERE embedder != ?'),
      count: db.prepare(
        'SELECT count(*) FROM vectors WHERE part = 0 AND (@e IS NULL OR embedder = @e) AND (@u IS NULL OR user_id = @u) AND (@s IS NULL OR session_id = @s)',
      ).pluck(),
      // one seek of vectors_filter that finds nothing: `count` with a user, whose `@u IS NULL OR …` no
      // index narrows, read every vector of every user at every GET /health (RealMem and LoCoMo dev's
      // 7,128 turns: 249 ms of CPU a probe, the event loop held as long)
      ping: db.prepare("SELECT 1 FROM vectors WHERE embedder = '' AND user_id = '' LIMIT 1").pluck(),
    };
  }

  /** Inserts or replaces one point; returns its rowid (stable across replaces). */
  upsert(tag: EmbedderTag, p: VectorPoint): number {
    const metadata = p.payload.metadata ? JSON.stringify(p.payload.metadata) : null;
    const part = p.part ?? 0;
    // a passage keeps no copy of the turn's text (65 of a 30,000-character turn would hold 2 MB): a
    // search that a passage wins reads the payload of the entry's part 0 (wholeRows)
    const content = part === 0 ? p.payload.content : '';
    const row = this.s.upsert.get({ id: p.id, embedder: tag.id, part, dim: tag.dim, ...p.payload, content, metadata, vector: toBlob(p.vector) }) as { rowid: number };
    return row.rowid;
  }

  /** Deletes the id's parts after `last` under the embedder. */
  trimParts(tag: EmbedderTag, userId: string, id: string, last: number): void {
    this.s.trimParts.run(userId, id, tag.id, last);
  }

  current(userId: string, id: string, embedder: string): Array<Omit<IndexRow, 'vector' | 'created_ms'> & { created_at: string; vector: Buffer }> {
    return this.s.current.all(userId, id, embedder) as Array<Omit<IndexRow, 'vector' | 'created_ms'> & { created_at: string; vector: Buffer }>;
  }

  /** the embedder's next `rows` rows after rowid `after`, as [rowid, id, user_id, session_id, vector, part, created_at] arrays (no object per row) */
  ofEmbedder(tag: EmbedderTag, after: number, rows: number): Array<[number, string, string, string, Buffer, number, string]> {
    return this.s.ofEmbedder.all({ embedder: tag.id, dim: tag.dim, after, rows }) as Array<[number, string, string, string, Buffer, number, string]>;
  }

  /** how many vectors each session after (userId, sessionId) holds under the embedder, `limit` sessions in index order */
  sessionsOf(tag: EmbedderTag, userId: string, sessionId: string, limit: number): Array<[string, string, number]> {
    return this.s.sessionsOf.all({ embedder: tag.id, user_id: userId, session_id: sessionId, limit }) as Array<[string, string, number]>;
  }

  /**
   * The rowids of the user's vectors of this embedder that match a retrieval filter: the scan ranks
   * only these, so a filtered search still finds k hits when k match.
   */
  matching(tag: EmbedderTag, userId: string, where: RecordFilter): Set<number> {
    const f = filterSql(where);
    const sql = `SELECT rowid FROM vectors WHERE embedder = @embedder AND user_id = @user_id${f.sql}`;
    let st = this.filtered.get(sql);
    if (!st) {
      if (this.filtered.size >= 64) this.filtered.clear();
      this.filtered.set(sql, (st = this.db.prepare(sql).pluck()));
    }
    return new Set(st.all({ embedder: tag.id, user_id: userId, ...f.params }) as number[]);
  }

  /** The rows of a search's candidates in one statement (one B-tree descent each, one call), as arrays (see StoredRow). */
  byRowids(rowids: readonly number[]): StoredRow[] {
    if (rowids.length === 0) return [];
    let st = this.byRowidsOf.get(rowids.length);
    if (!st) {
      st = this.db.prepare(`SELECT rowid, id, part, embedder, ${PAYLOAD}, vector FROM vectors WHERE rowid IN (${rowids.map(() => '?').join(', ')})`).raw();
      if (this.byRowidsOf.size < 64) this.byRowidsOf.set(rowids.length, st);
    }
    return st.all(rowids) as StoredRow[];
  }

  whole(tag: EmbedderTag, userId: string, id: string): StoredRow | undefined {
    return this.s.whole.get(userId, id, tag.id) as StoredRow | undefined;
  }

  has(tag: EmbedderTag, userId: string, ids: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const id of ids) if (this.s.has.get(userId, id, tag.id)) out.add(id);
    return out;
  }

  /** Deletes under every embedder; returns what was removed. */
  delete(userId: string, ids: readonly string[]): RemovedRow[] {
    const out: RemovedRow[] = [];
    for (const id of ids) out.push(...(this.s.delete.all(userId, id) as RemovedRow[]));
    return out;
  }

  /** at most `rows` of them (-1: all) */
  deleteWhere(filter: VectorFilter, rows: number): RemovedRow[] {
    return (filter.session_id === undefined ? this.s.deleteUser.all(filter.user_id, rows) : this.s.deleteSession.all(filter.user_id, filter.session_id, rows)) as RemovedRow[];
  }

  deleteAll(): number {
    return this.s.deleteAll.run().changes;
  }

  deleteOtherEmbedders(keep: EmbedderTag): number {
    return this.s.deleteOthers.run(keep.id).changes;
  }

  count(tag?: EmbedderTag, filter?: VectorFilter): number {
    return this.s.count.get({ e: tag?.id ?? null, u: filter?.user_id ?? null, s: filter?.session_id ?? null }) as number;
  }

  /** reads the table's index (throws when the file does not answer) */
  ping(): void {
    this.s.ping.get();
  }

  transaction<T>(fn: () => T): T {
    return atomically(this.db, fn);
  }
}

/**
 * The vector store in the SQLite file, shared by the processes of one host (WAL). Calls are
 * synchronous underneath (better-sqlite3) and resolve at once; a write is one IMMEDIATE transaction,
 * which serialises writers across processes, so the change log's AUTOINCREMENT seqs commit in order.
 */
export class SqliteVectorStore implements VectorStore {
  readonly kind = 'sqlite' as const;
  private readonly rows: VectorRows;
  private readonly log: ChangeLog;

  constructor(
    db: Db,
    readonly where: string = db.name,
    /**
     * the store's transaction batcher: vector writes then commit with the turn log's and long-term
     * store's writes of the same event-loop turn (a batch of embed jobs beside a batch of persist jobs:
     * one commit, not two). Vector writes go in its `later` lane: they are the embed jobs' results, or
     * wait for those in the index's chain of writes (EmbeddedVectorIndex keeps them in call order)
     */
    private readonly writes?: TransactionBatcher,
  ) {
    this.rows = new VectorRows(db);
    this.log = new ChangeLog(db);
  }

  async upsert(batch: ReadonlyArray<{ tag: EmbedderTag; points: readonly VectorPoint[] }>, retain: number): Promise<Written<number[][]>> {
    return this.write(retain, () =>
      batch.map((u) => {
        const rowids = u.points.map((p) => this.rows.upsert(u.tag, p));
        for (const { user_id, id, last } of lastParts(u.points)) this.rows.trimParts(u.tag, user_id, id, last);
        return rowids;
      }),
    );
  }

  async delete(userId: string, ids: readonly string[], retain: number): Promise<Written<RemovedRow[]>> {
    return this.write(retain, () => this.rows.delete(userId, ids));
  }

  async deleteWhere(filter: VectorFilter, retain: number, rows = -1): Promise<Written<RemovedRow[]>> {
    return this.write(retain, () => this.rows.deleteWhere(filter, rows));
  }

  async deleteAll(retain: number): Promise<Written<number>> {
    return this.write(retain, () => this.rows.deleteAll());
  }

  async deleteOtherEmbedders(keep: EmbedderTag, retain: number): Promise<Written<number>> {
    return this.write(retain, () => this.rows.deleteOtherEmbedders(keep));
  }

  /**
   * A page of rows at a time, in the process's slices of work (src/pace.ts): read in one pass, 100k
   * vectors held the event loop ~2 s at a fresh process's first search, every request waiting. A turn
   * of the loop after each page, not only once the slice is spent: a connection is seen (and paused
   * for) only once the loop has accepted it, and a fresh process's /health waited ~20 ms behind two
   * slices of pages before that. Rows written after the caller read the log's head are replayed from
   * it, so a page reading some of them too changes nothing.
   */
  async load(tag: EmbedderTag, reserve: (userId: string, n: number) => void, put: LoadPut): Promise<void> {
    for (const [userId, n] of await this.usersOf(tag)) reserve(userId, n);
    for (let after = 0; ; ) {
      await giveTurn();
      const rows = this.rows.ofEmbedder(tag, after, LOAD_PAGE);
      for (const [rowid, id, user_id, session_id, vector, part, created_at] of rows) put(id, user_id, session_id, rowid, toFloat32(vector), part, Date.parse(created_at));
      if (rows.length < LOAD_PAGE) return;
      after = rows[rows.length - 1]![0];
    }
  }

  /**
   * How many vectors each user holds under the embedder, counted COUNT_PAGE sessions at a time with a
   * turn of the event loop between: one count grouped by user read the whole index in one statement
   * (100k vectors of one user: 56 ms cold, at a fresh process's first retrieve).
   */
  private async usersOf(tag: EmbedderTag): Promise<Map<string, number>> {
    const users = new Map<string, number>();
    // ids are never empty: ('', '') comes before every session
    for (let after: [string, string] = ['', '']; ; await giveTurn()) {
      const page = this.rows.sessionsOf(tag, after[0], after[1], COUNT_PAGE);
      for (const [userId, , n] of page) users.set(userId, (users.get(userId) ?? 0) + n);
      if (page.length < COUNT_PAGE) return users;
      const [userId, sessionId] = page[page.length - 1]!;
      after = [userId, sessionId];
    }
  }

  async current(keys: readonly Change[]): Promise<Array<IndexRow & { embedder: string }>> {
    const out: Array<IndexRow & { embedder: string }> = [];
    for (const k of keys) {
      for (const { created_at, ...row } of this.rows.current(k.user_id, k.id, k.embedder)) out.push({ ...row, embedder: k.embedder, created_ms: Date.parse(created_at), vector: toFloat32(row.vector) });
    }
    return out;
  }

  async matching(tag: EmbedderTag, userId: string, where: RecordFilter): Promise<Set<number>> {
    return this.rows.matching(tag, userId, where);
  }

  async byRowids(rowids: readonly number[]): Promise<Map<number, FullRow>> {
    const out = new Map<number, FullRow>();
    for (const r of this.rows.byRowids(rowids)) out.set(r[0], fullRow(r));
    return out;
  }

  async wholeRows(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Map<string, FullRow>> {
    const out = new Map<string, FullRow>();
    for (const id of ids) {
      const r = this.rows.whole(tag, userId, id);
      if (r) out.set(id, fullRow(r));
    }
    return out;
  }

  async has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>> {
    return this.rows.has(tag, userId, ids);
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    return this.rows.count(tag, filter);
  }

  async head(): Promise<{ head: number; pruned: number }> {
    return this.log.head();
  }

  async since(seq: number, limit: number): Promise<Change[]> {
    return this.log.since(seq, limit);
  }

  async ping(): Promise<void> {
    this.rows.ping();
  }

  /** runs `fn` in one write transaction, pruning the log, and returns the change range it produced */
  private async write<T>(retain: number, fn: () => T): Promise<Written<T>> {
    return this.writes ? this.writes.later(() => this.writeNow(retain, fn)) : this.writeNow(retain, fn);
  }

  private writeNow<T>(retain: number, fn: () => T): Written<T> {
    let changes: ChangeRange = { from: 0, to: 0 };
    const result = this.rows.transaction(() => {
      const from = this.log.head().head;
      const r = fn();
      this.log.prune(retain, pruneStep(retain));
      changes = { from, to: this.log.head().head };
      return r;
    });
    return { result, changes };
  }
}

function fullRow([, id, part, embedder, user_id, session_id, role, name, kind, content, content_hash, created_at, metadata, vector]: StoredRow): FullRow {
  // the payload's keys in PAYLOAD's order, as the object rows gave them
  const payload: VectorPayload = { user_id, session_id, role, name, kind, content, content_hash, created_at, metadata: metadata ? (JSON.parse(metadata) as Record<string, unknown>) : null };
  return { id, part, embedder, vector: toFloat32(vector), payload };
}
