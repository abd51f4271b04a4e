import { ValidationError } from '../../errors.js';
import type { Db } from '../sqlite/db.js';
import { isEmptyFilter, matchesFilter } from '../../domain/filters.js';
import type { EmbedderTag, VectorFilter, VectorHit, VectorIndex, VectorPoint, VectorSearchFilter } from '../../ports/vector-index.js';
import { ChangeLog, OwnChanges } from './change-log.js';
import { EmbedderIndex } from './embedder-index.js';
import { cosine } from './quantize.js';
import { toFloat32, VectorRows, type FullRow } from './rows.js';

export interface EmbeddedVectorIndexOptions {
  /** changes kept in `vector_changes` for other processes to catch up from (default 100,000) */
  retainChanges?: number;
  /**
   * how many candidates of the int8 scan get the exact float32 rerank for a search of `k` (default
   * 1.5·k + 8: at k = 8 and 24 the exact top k was always among them on clustered and hash-embedder
   * data, see bench `retrieve`)
   */
  candidates?: (k: number) => number;
}

interface PendingUpsert {
  tag: EmbedderTag;
  points: readonly VectorPoint[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** a reader this far behind (in changes not its own) reloads instead of replaying */
const RELOAD_AFTER_MIN = 50_000;
const CHANGES_PAGE = 5_000;

/**
 * Embedded semantic tier: vectors persisted in the `vectors` table of the SQLite file and searched
 * in memory.
 *
 * Search: the user's vectors sit in one contiguous int8 partition (see `Partition`), scanned by a
 * WebAssembly SIMD kernel (~2.2 ms for 100k × 384 on these machines, against ~25 ms for a plain JS
 * float32 scan); the best `candidates(k)` rows are read back from SQLite, reranked by their exact
 * float32 cosine and cut to `k`. No score comes from the quantized codes. Memory: ~0.4 KiB per
 * 384-dimension vector plus its id; float32 vectors and payloads stay in the file.
 *
 * Processes sharing the file: every write to `vectors` is logged in `vector_changes` (by triggers,
 * in the same transaction). Before each search the index reads the changes since the last one it
 * saw and re-reads those rows, so vectors written or deleted by another process are seen without a
 * reload; its own writes are applied to memory as they commit and skipped in the log.
 *
 * Loading: an embedder's vectors are read into memory on its first search (or reload after the
 * log was pruned past this process); writes before that only touch the file.
 *
 * Writes: upserts issued in the same event-loop turn (concurrent embed jobs) are committed in one
 * transaction, so the write path pays one commit per batch, not per turn.
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly backend = 'embedded' as const;
  private readonly rows: VectorRows;
  private readonly log: ChangeLog;
  private readonly own = new OwnChanges();
  private readonly loaded = new Map<string, EmbedderIndex>();
  /** the newest change reflected in the loaded embedders */
  private cursor = 0;
  private pending: PendingUpsert[] = [];
  private flushScheduled = false;
  private readonly retain: number;
  private readonly candidates: (k: number) => number;

  constructor(db: Db, options: EmbeddedVectorIndexOptions = {}) {
    this.rows = new VectorRows(db);
    this.log = new ChangeLog(db);
    this.retain = options.retainChanges ?? 100_000;
    this.candidates = options.candidates ?? ((k) => Math.ceil(k * 1.5) + 8);
  }

  async upsert(tag: EmbedderTag, points: readonly VectorPoint[]): Promise<void> {
    points.forEach((p, i) => {
      if (p.vector.length !== tag.dim) {
        const message = `vector of ${p.vector.length} dimensions; embedder ${tag.id} has ${tag.dim}`;
        throw new ValidationError(message, [{ path: `points.${i}.vector`, message }]);
      }
    });
    if (points.length === 0) return;
    return new Promise((resolve, reject) => {
      this.pending.push({ tag, points, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  async search(tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, k: number): Promise<VectorHit[]> {
    if (query.length !== tag.dim) {
      const message = `query of ${query.length} dimensions; embedder ${tag.id} has ${tag.dim}`;
      throw new ValidationError(message, [{ path: 'query', message }]);
    }
    if (k <= 0) return [];
    this.catchUp();
    const index = this.index(tag);
    const where = isEmptyFilter(filter.where) ? undefined : filter.where;
    const allowed = where ? this.rows.matching(tag, filter.user_id, where) : undefined;
    if (allowed?.size === 0) return [];
    const { rowids, ids } = index.nearest(query, filter.user_id, filter.session_id, Math.max(k, this.candidates(k)), allowed);
    const hits: VectorHit[] = [];
    const rows = this.rows.byRowids(rowids);
    rowids.forEach((rowid, i) => {
      const row = rows.get(rowid);
      // the row may have changed since the scan (another process): never return another user's vector
      if (!row || row.id !== ids[i] || row.embedder !== tag.id || row.user_id !== filter.user_id) return;
      if (filter.session_id !== undefined && row.session_id !== filter.session_id) return;
      const payload = payloadOf(row);
      if (where && !matchesFilter(payload, where)) return;
      hits.push({ id: row.id, score: cosine(query, toFloat32(row.vector)), payload });
    });
    return hits.sort((a, b) => b.score - a.score).slice(0, k);
  }

  async has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>> {
    this.flushNow();
    return this.rows.has(tag, userId, ids);
  }

  async delete(userId: string, ids: readonly string[]): Promise<void> {
    this.flushNow();
    const removed = this.write(() => this.rows.delete(userId, ids));
    for (const r of removed) this.loaded.get(r.embedder)?.remove(r.user_id, r.id);
  }

  async deleteWhere(filter: VectorFilter): Promise<number> {
    this.flushNow();
    const removed = this.write(() => this.rows.deleteWhere(filter));
    for (const r of removed) this.loaded.get(r.embedder)?.remove(r.user_id, r.id);
    return new Set(removed.map((r) => r.id)).size;
  }

  async deleteAll(): Promise<void> {
    this.flushNow();
    this.write(() => this.rows.deleteAll());
    for (const index of this.loaded.values()) index.clear();
  }

  async deleteOtherEmbedders(keep: EmbedderTag): Promise<number> {
    this.flushNow();
    const n = this.write(() => this.rows.deleteOtherEmbedders(keep));
    for (const id of [...this.loaded.keys()]) if (id !== keep.id) this.loaded.delete(id);
    return n;
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    this.flushNow();
    return this.rows.count(tag, filter);
  }

  async ping(): Promise<boolean> {
    this.rows.count(undefined, { user_id: '' });
    return true;
  }

  /** Commits pending upserts and drops the in-memory indexes (the file keeps everything). */
  async close(): Promise<void> {
    this.flushNow();
    this.loaded.clear();
    this.own.clear();
  }

  /**
   * Loads the embedder's vectors now rather than on the first search (~1–2 s per 100k vectors here,
   * during which the event loop is busy): for a server to call at start-up, once its embedder is ready.
   */
  async warm(tag: EmbedderTag): Promise<void> {
    this.catchUp();
    this.index(tag);
  }

  /** What the in-memory side holds, per loaded embedder (bench, doctor). */
  stats(): Array<{ embedder: string; dim: number; vectors: number; users: number; arenaBytes: number; arenaUsed: number }> {
    return [...this.loaded.values()].map((ix) => ({ embedder: ix.id, dim: ix.dim, ...ix.stats() }));
  }

  /** The embedder's in-memory index, loading it from the file on first use. */
  private index(tag: EmbedderTag): EmbedderIndex {
    const held = this.loaded.get(tag.id);
    if (held && held.dim === tag.dim) return held;
    // head first: rows read after it reflect every change up to it; later ones are replayed
    const { head } = this.log.head();
    const index = this.fill(new EmbedderIndex(tag.id, tag.dim));
    if (this.loaded.size === 0) this.cursor = head;
    // an older cursor (other embedders loaded) replays (cursor, head] for this one too: harmless
    this.loaded.set(tag.id, index);
    return index;
  }

  private fill(index: EmbedderIndex): EmbedderIndex {
    for (const { user_id, n } of this.rows.usersOf(index)) index.reserve(user_id, n);
    for (const [rowid, id, user, session, vector] of this.rows.ofEmbedder(index)) index.put(id, user, session, rowid, toFloat32(vector));
    return index;
  }

  /** Applies the changes other processes logged since the cursor (or reloads when too far behind). */
  private catchUp(): void {
    if (this.loaded.size === 0) return;
    const { head, pruned } = this.log.head();
    if (head === this.cursor) return;
    const foreign = head - this.cursor - this.own.countIn(this.cursor, head);
    // pruned before this process read them: fine when they were all its own (applied as written)
    const lost = pruned > this.cursor && this.own.countIn(this.cursor, pruned) < pruned - this.cursor;
    let loadedVectors = 0;
    for (const ix of this.loaded.values()) loadedVectors += ix.size;
    if (lost || foreign > Math.max(RELOAD_AFTER_MIN, loadedVectors)) {
      for (const ix of this.loaded.values()) {
        ix.clear();
        this.fill(ix);
      }
      this.cursor = head;
    } else {
      this.cursor = Math.max(this.cursor, pruned);
      for (;;) {
        const changes = this.log.since(this.cursor, CHANGES_PAGE);
        const seen = new Set<string>();
        for (const c of changes) {
          this.cursor = c.seq;
          if (this.own.has(c.seq)) continue;
          const ix = this.loaded.get(c.embedder);
          const key = `${c.embedder}\u0000${c.user_id}\u0000${c.id}`;
          if (!ix || seen.has(key)) continue;
          seen.add(key);
          // re-read the row as it is now: later changes to it only repeat this
          const row = this.rows.current(c.user_id, c.id, c.embedder);
          if (row) ix.put(row.id, row.user_id, row.session_id, row.rowid, toFloat32(row.vector));
          else ix.remove(c.user_id, c.id);
        }
        if (changes.length < CHANGES_PAGE) break;
      }
    }
    this.own.dropThrough(this.cursor);
  }

  /** Runs a write transaction and records the changes it logged as this process's own. */
  private write<T>(fn: () => T): T {
    let from = 0;
    let to = 0;
    const out = this.rows.transaction(() => {
      from = this.log.head().head;
      const r = fn();
      this.log.prune(this.retain, Math.max(1, Math.ceil(this.retain / 10)));
      to = this.log.head().head;
      return r;
    });
    if (this.loaded.size > 0) this.own.add(from, to);
    return out;
  }

  private flushNow(): void {
    if (this.pending.length > 0) this.flush();
  }

  /** Commits every pending upsert in one transaction; on failure, each call alone, so only the bad one fails. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      this.commit(batch);
      for (const u of batch) u.resolve();
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      for (const u of batch) {
        try {
          this.commit([u]);
          u.resolve();
        } catch (e) {
          u.reject(e);
        }
      }
    }
  }

  private commit(batch: readonly PendingUpsert[]): void {
    const rowids = this.write(() => batch.map((u) => u.points.map((p) => this.rows.upsert(u.tag, p))));
    batch.forEach((u, i) => {
      const index = this.loaded.get(u.tag.id);
      if (!index || index.dim !== u.tag.dim) return;
      u.points.forEach((p, j) => index.put(p.id, p.payload.user_id, p.payload.session_id, rowids[i]![j]!, p.vector));
    });
  }
}

function payloadOf(r: FullRow): VectorHit['payload'] {
  return {
    user_id: r.user_id,
    session_id: r.session_id,
    role: r.role,
    name: r.name,
    kind: r.kind,
    content: r.content,
    content_hash: r.content_hash,
    created_at: r.created_at,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : null,
  };
}
