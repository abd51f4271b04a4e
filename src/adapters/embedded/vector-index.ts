import { BackendUnavailableError, ValidationError } from '../../errors.js';
import { giveTurn, room, SLICE_MS } from '../../pace.js';
import type { Db } from '../sqlite/db.js';
import { filterTest, isEmptyFilter, type RecordFilter } from '../../domain/filters.js';
import type { EmbedderTag, VectorFilter, VectorHit, VectorIndex, VectorPoint, VectorSearchFilter } from '../../ports/vector-index.js';
import { OwnChanges } from './change-log.js';
import { EmbedderIndex } from './embedder-index.js';
import { cosine } from './quantize.js';
import { SqliteVectorStore } from './rows.js';
import { lastParts } from '../vector-parts.js';
import { ListingCache } from './listings.js';
import type { CreatedSpan, PartitionShape } from './partition.js';
import type { ChangeRange, FullRow, RemovedRow, VectorStore } from './store.js';

export interface EmbeddedVectorIndexOptions {
  /** changes kept in `vector_changes` for other processes to catch up from (default 100,000) */
  retainChanges?: number;
  /**
   * how many candidates of the int8 scan get the exact float32 rerank for a search of `k` (default
   * 1.5·k + 8: at k = 8 and 24 the exact top k was always among them on clustered and hash-embedder
   * data, see bench `retrieve`)
   */
  candidates?: (k: number) => number;
  /** a user's scan is shared with the helper thread from this many vectors (default: EmbedderIndex's) */
  shareScansFrom?: number;
  /**
   * a filtered search of a user holding this many vectors may find its rows in the unfiltered
   * ranking instead of listing what the filter allows (default 4,096; below it the listing is cheap)
   */
  probeFrom?: number;
  /**
   * how long a flush's vectors, or a catch-up's entries, are put into memory before the event loop
   * gets a turn (default SLICE_MS; 0: a vector, or an entry, a turn)
   */
  sliceMs?: number;
}

/** a search's candidates by the int8 scan, best first, with their rows as read */
interface Found {
  rowids: number[];
  ids: string[];
  rows: Map<number, FullRow>;
}

/** ids a delete takes a transaction: each a statement (every part, every embedder) and its change */
const DELETE_IDS = 256;
/** rows a deleteWhere takes a transaction */
const DELETE_ROWS = 512;

/** the unfiltered candidates a filtered search's probe ranks (at least; 3·r for a larger r) */
const PROBE_ROWS = 256;
/** a probe is tried when the filter is expected to allow this many times r among its candidates */
const PROBE_MARGIN = 1.25;
/** a probe reads at most one candidate's row per this many rows of the user (and at least 2·r) */
const PROBE_READS_PER_ROW = 32;

/**
 * the row read is still the one the scan ranked (another process may have changed it since): never
 * another user's vector, nor another session's when the search names one
 */
function isCurrent(row: FullRow, id: string, tag: EmbedderTag, filter: VectorSearchFilter): boolean {
  return row.id === id && row.embedder === tag.id && row.payload.user_id === filter.user_id && (filter.session_id === undefined || row.payload.session_id === filter.session_id);
}

/**
 * A filter's time bounds, which the scan tests on each row (Partition keeps every row's time), and the
 * rest, which a listing of the store or a probe of the unfiltered ranking answers. Each query names
 * its own time ("before we talked about X": the session's start), so a listing that held the time
 * served one query and was read again for the next (100k turns of one user: 31 ms of a 37 ms retrieve).
 */
function splitTime(where: RecordFilter): { span: CreatedSpan | undefined; rest: RecordFilter | undefined } {
  const { created_after, created_before, ...rest } = where;
  const timed = created_after !== undefined || created_before !== undefined;
  const span = timed ? { from: created_after === undefined ? -Infinity : Date.parse(created_after), before: created_before === undefined ? Infinity : Date.parse(created_before) } : undefined;
  return { span, rest: isEmptyFilter(rest) ? undefined : rest };
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
 * Embedded semantic tier: vectors persisted in a `VectorStore` — the SQLite file, or PostgreSQL when
 * `database_url` is set — and searched in memory.
 *
 * Search: the user's vectors sit in one contiguous int8 partition (see `Partition`), scanned by a
 * WebAssembly SIMD kernel (~1.9 ms for 100k × 384 on these machines, ~1.2 for a chat message's query
 * of the `hash` embedder, against ~25 ms for a plain JS float32 scan); the best `candidates(k)` rows
 * are read back from the store, reranked by their exact float32 cosine and cut to `k`. No score comes
 * from the quantized codes. Memory: ~0.4 KiB per 384-dimension vector plus its id; float32 vectors and
 * payloads stay in the store.
 *
 * A filtered search reranks the best rows its filter allows, found one of two ways with the same
 * answer: in the unfiltered scan's best rows, checked against the filter as they are read (`probe`:
 * a big user and a filter that keeps enough of them), or by listing the rows the filter allows and
 * scanning those alone. A big user's listing is kept while the user's vectors are unchanged
 * (ListingCache: any put or remove of theirs retires it).
 *
 * Processes sharing the store (several on one host over the file; any number on any host over
 * PostgreSQL): every write to `vectors` is logged in `vector_changes` in the same transaction. Before
 * each search the index reads the changes since the last one it saw and re-reads those rows, so
 * vectors written or deleted by another process are seen without a reload; its own writes are applied
 * to memory as they commit and skipped in the log.
 *
 * In-memory state changes in one lane, one step at a time (loads, catch-ups, own writes applied in
 * commit order), so a step's reads of the store and its changes to memory are never interleaved with
 * another's. Writes of this process go through one chain, in the order they were called.
 *
 * Loading: an embedder's vectors are read into memory on its first search (or reload after the
 * log was pruned past this process); writes before that only touch the store.
 *
 * Writes: upserts issued in the same event-loop turn (concurrent embed jobs) are committed in one
 * transaction, so the write path pays one commit per batch, not per turn.
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly backend = 'embedded' as const;
  /** where the vectors live */
  readonly store: VectorStore;
  private readonly own = new OwnChanges();
  private readonly loaded = new Map<string, EmbedderIndex>();
  /** listings of what filters allowed, while the user's vectors are unchanged (see ListingCache) */
  private readonly listings = new ListingCache();
  /** the newest change reflected in the loaded embedders */
  private cursor = 0;
  private pending: PendingUpsert[] = [];
  private flushScheduled = false;
  /** this process's writes, one after the other */
  private writes: Promise<unknown> = Promise.resolve();
  /** the steps that change in-memory state, one after the other */
  private lane: Promise<unknown> = Promise.resolve();
  /** a catch-up queued in the lane and not started yet: callers meanwhile share it */
  private queuedSync: Promise<void> | null = null;
  private readonly retain: number;
  private readonly candidates: (k: number) => number;
  private readonly shareScansFrom: number | undefined;
  private readonly probeFrom: number;
  private readonly sliceMs: number;
  /** searches of this index in progress (see search) */
  private searching = 0;

  constructor(store: VectorStore | Db, options: EmbeddedVectorIndexOptions = {}) {
    this.store = isVectorStore(store) ? store : new SqliteVectorStore(store);
    this.retain = options.retainChanges ?? 100_000;
    this.candidates = options.candidates ?? ((k) => Math.ceil(k * 1.5) + 8);
    this.shareScansFrom = options.shareScansFrom;
    this.probeFrom = options.probeFrom ?? 4096;
    this.sliceMs = options.sliceMs ?? SLICE_MS;
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
        setImmediate(() => void this.flush());
      }
    });
  }

  async search(tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, k: number, signal?: AbortSignal): Promise<VectorHit[]> {
    if (query.length !== tag.dim) {
      const message = `query of ${query.length} dimensions; embedder ${tag.id} has ${tag.dim}`;
      throw new ValidationError(message, [{ path: 'query', message }]);
    }
    if (k <= 0) return [];
    this.searching++;
    try {
      return await this.searchIn(tag, query, filter, k, signal);
    } finally {
      this.searching--;
    }
  }

  private async searchIn(tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, k: number, signal?: AbortSignal): Promise<VectorHit[]> {
    const loading = signal !== undefined && !this.loaded.has(tag.id);
    const index = await this.ready(tag);
    // the load held the event loop (~2 s of CPU per 100k vectors, 6+ s on a loaded machine): the
    // budget timers of the searches waiting for it could not fire meanwhile, and each would then list
    // and scan in one go for a caller that gave up (a fresh process's first 16 retrieves). One turn of
    // the loop's timers lets those that ran out abort (theirs expire before this one)
    if (loading) await new Promise((resolve) => setTimeout(resolve, 0));
    signal?.throwIfAborted();
    const where = isEmptyFilter(filter.where) ? undefined : filter.where;
    const { span, rest } = where ? splitTime(where) : { span: undefined, rest: undefined };
    const shape = rest ? index.shape(filter.user_id) : undefined;
    const key = rest ? JSON.stringify(rest) : '';
    /** the user's rowids the filter allows, once listed */
    let allowed: ReadonlySet<number> | undefined;
    // a lone search may share its scan with the helper thread (a free core makes it ~2x faster); with
    // others in progress the process already keeps both cores busy, and splitting would only add the
    // hand-over's CPU (measured: +0.5 ms a pass at 16 concurrent retrieves, no throughput gained)
    const share = this.searching === 1;
    // a long turn's passages are rows of their own and may fill the candidates: while the best
    // entries are fewer than k and rows were left out, the scan is repeated for more of them
    for (let r = Math.max(k, this.candidates(k)); ; r *= 4) {
      signal?.throwIfAborted();
      // the r best rows the filter allows by the int8 scan: from the unfiltered ranking when the
      // filter keeps enough of it, else from a scan of the listed rows alone — the same rows, in order
      if (rest && shape && !allowed) allowed = this.listings.get(tag.id, filter.user_id, key, shape);
      let found = rest && shape && !allowed ? await this.probe(index, shape, key, tag, query, filter, where!, span, r, share) : null;
      if (!found) {
        if (rest && !allowed) {
          const version = shape?.version;
          allowed = await this.store.matching(tag, filter.user_id, rest);
          if (shape) {
            shape.setHint(key, allowed.size / shape.n);
            if (shape.n >= this.probeFrom) this.listings.set(tag.id, filter.user_id, key, shape, version!, allowed);
          }
          if (allowed.size === 0) return [];
          signal?.throwIfAborted();
        }
        const { rowids, ids } = index.nearest(query, filter.user_id, filter.session_id, r, allowed, share, span);
        found = { rowids, ids, rows: await index.candidates.of(rowids, (missing) => this.store.byRowids(missing)) };
      }
      const { rowids, ids, rows } = found;
      const best = new Map<string, VectorHit>();
      const allows = where ? filterTest(where) : null;
      rowids.forEach((rowid, i) => {
        const row = rows.get(rowid);
        if (!row || !isCurrent(row, ids[i]!, tag, filter)) return;
        if (allows && !allows(row.payload)) return;
        const score = cosine(query, row.vector);
        const held = best.get(row.id);
        if (!held || score > held.score) best.set(row.id, { id: row.id, score, part: row.part, payload: row.payload });
      });
      if (best.size >= k || rowids.length < r) return this.withText([...best.values()].sort((a, b) => b.score - a.score).slice(0, k), tag, filter.user_id);
    }
  }

  /**
   * A filtered search's r best allowed rows without listing what the filter allows: the user's
   * `size` best rows by the int8 scan of the filter's time (without one, the plain search's scan,
   * shared with the helper thread), read in their order r at a time, each row's payload checked
   * against the filter (`matchesFilter`, the meaning every store's SQL is held to) until r pass. The
   * allowed rows among the best are the best allowed rows, in the same order (the scans rank by
   * score, then by row), so these are exactly the rows the listed scan finds. Null when the filter keeps too few
   * of the best for that (then the caller lists): judged before the scan by the share the filter
   * allowed when last seen and the rows of its sessions, and after each read by the share passing.
   */
  private async probe(
    index: EmbedderIndex, shape: PartitionShape, key: string, tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, where: RecordFilter, span: CreatedSpan | undefined, r: number, share: boolean,
  ): Promise<Found | null> {
    const n = shape.n;
    const size = Math.max(PROBE_ROWS, 3 * r);
    if (n < this.probeFrom) return null;
    const expected = Math.min(shape.hint(key) ?? 1, where.session_ids ? shape.rowsOfSessions(where.session_ids) / n : 1);
    if (size < n && expected * size < PROBE_MARGIN * r) return null;
    const { rowids, ids } = index.nearest(query, filter.user_id, filter.session_id, size, undefined, share, span);
    // fewer than asked: every row of the user was ranked, and the allowed ones are all there is
    const complete = rowids.length < size;
    const picked: Found = { rowids: [], ids: [], rows: new Map() };
    const allows = filterTest(where);
    // rows read (~7 µs each) beyond this cost more than the listing (~0.25 µs a row of the user) would
    const budget = complete ? rowids.length : Math.max(2 * r, Math.ceil(n / PROBE_READS_PER_ROW));
    for (let read = 0; picked.rowids.length < r && read < Math.min(rowids.length, budget); ) {
      const batch = rowids.slice(read, read + r);
      const rows = await index.candidates.of(batch, (missing) => this.store.byRowids(missing));
      for (let i = 0; i < batch.length && picked.rowids.length < r; i++) {
        const rowid = batch[i]!;
        const row = rows.get(rowid);
        if (!row || !isCurrent(row, ids[read + i]!, tag, filter) || !allows(row.payload)) continue;
        picked.rowids.push(rowid);
        picked.ids.push(ids[read + i]!);
        picked.rows.set(rowid, row);
      }
      read += batch.length;
    }
    return picked.rowids.length === r || complete ? picked : null;
  }

  /** Hits a passage won carry their entry's payload (a passage row keeps no text); one whose entry is gone is dropped. */
  private async withText(hits: VectorHit[], tag: EmbedderTag, userId: string): Promise<VectorHit[]> {
    const passages = hits.filter((h) => h.part > 0);
    if (passages.length === 0) return hits;
    const whole = await this.store.wholeRows(tag, userId, passages.map((h) => h.id));
    return hits.flatMap((h) => {
      if (h.part === 0) return [h];
      const row = whole.get(h.id);
      return row ? [{ ...h, payload: row.payload }] : [];
    });
  }

  async has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>> {
    await this.flushNow();
    return this.store.has(tag, userId, ids);
  }

  /** the user's ids deleted DELETE_IDS a transaction, in the process's slices of work (see deleteWhere) */
  async delete(userId: string, ids: readonly string[]): Promise<void> {
    for (let from = 0; from < ids.length; from += DELETE_IDS) {
      if (from > 0) await giveTurn();
      await this.write((r) => this.store.delete(userId, ids.slice(from, from + DELETE_IDS), r), (removed) => this.removeLoaded(removed));
    }
  }

  /**
   * A user's (or session's) vectors deleted DELETE_ROWS a transaction, in the process's slices of work
   * (src/pace.ts): a forget of a user of 30,000 turns held the event loop ~1 s in one transaction of
   * the user's rows and another of its ids. A search between two transactions may find some of them.
   */
  async deleteWhere(filter: VectorFilter): Promise<number> {
    const ids = new Set<string>();
    for (let first = true; ; first = false) {
      if (!first) await giveTurn();
      const removed = await this.write((r) => this.store.deleteWhere(filter, r, DELETE_ROWS), (removed) => this.removeLoaded(removed));
      for (const x of removed) ids.add(x.id);
      if (removed.length < DELETE_ROWS) return ids.size;
    }
  }

  private removeLoaded(removed: readonly RemovedRow[]): void {
    for (const x of removed) this.loaded.get(x.embedder)?.remove(x.user_id, x.id);
  }

  async deleteAll(): Promise<void> {
    await this.write((r) => this.store.deleteAll(r), () => {
      for (const index of this.loaded.values()) index.clear();
      this.listings.clear();
    });
  }

  async deleteOtherEmbedders(keep: EmbedderTag): Promise<number> {
    return this.write((r) => this.store.deleteOtherEmbedders(keep, r), () => {
      for (const id of [...this.loaded.keys()]) if (id !== keep.id) this.loaded.delete(id);
      this.listings.clear();
    });
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    await this.flushNow();
    return this.store.count(tag, filter);
  }

  async ping(): Promise<boolean> {
    await this.store.ping();
    return true;
  }

  /** Commits pending upserts and drops the in-memory indexes (the store keeps everything). */
  async close(): Promise<void> {
    await this.flushNow();
    await this.lane.catch(() => {});
    this.loaded.clear();
    this.listings.clear();
    this.own.clear();
  }

  /**
   * Loads the embedder's vectors now rather than on the first search (~1–2 s per 100k vectors here,
   * during which the event loop is busy): for a server to call at start-up, once its embedder is ready.
   */
  async warm(tag: EmbedderTag): Promise<void> {
    await this.ready(tag);
  }

  /** What the in-memory side holds, per loaded embedder (bench, doctor). */
  stats(): Array<{ embedder: string; dim: number; vectors: number; users: number; arenaBytes: number; arenaUsed: number }> {
    return [...this.loaded.values()].map((ix) => ({ embedder: ix.id, dim: ix.dim, ...ix.stats() }));
  }

  /** Runs `step` in the lane, after every step queued before it. */
  private inLane<T>(step: () => Promise<T> | T): Promise<T> {
    const run = this.lane.then(step, step);
    this.lane = run.catch(() => {});
    return run;
  }

  /**
   * The embedder's in-memory index, caught up with every change committed before this call (by any
   * process), loading it from the store on first use.
   */
  private async ready(tag: EmbedderTag): Promise<EmbedderIndex> {
    await this.sync();
    const held = this.loaded.get(tag.id);
    if (held && held.dim === tag.dim) return held;
    return this.inLane(async () => {
      const again = this.loaded.get(tag.id);
      if (again && again.dim === tag.dim) return again;
      // head first: rows read after it reflect every change up to it; later ones are replayed
      const { head } = await this.store.head();
      const split = this.shareScansFrom === undefined ? undefined : { minRows: this.shareScansFrom };
      const index = await this.fill(new EmbedderIndex(tag.id, tag.dim, split));
      if (this.loaded.size === 0) this.cursor = head;
      // an older cursor (other embedders loaded) replays (cursor, head] for this one too: harmless
      this.loaded.set(tag.id, index);
      return index;
    });
  }

  private async fill(index: EmbedderIndex): Promise<EmbedderIndex> {
    await this.store.load(index, (user, n) => index.reserve(user, n), (id, user, session, rowid, vector, part, created) => index.put(id, user, session, rowid, vector, part, created));
    return index;
  }

  /**
   * A catch-up that starts after this call: one already running may have read the head before a
   * change the caller must see. Calls while it waits share it.
   */
  private sync(): Promise<void> {
    if (this.loaded.size === 0) return Promise.resolve();
    this.queuedSync ??= this.inLane(() => {
      this.queuedSync = null;
      return this.catchUp();
    });
    return this.queuedSync;
  }

  /** Applies the changes other processes logged since the cursor (or reloads when too far behind). */
  private async catchUp(): Promise<void> {
    if (this.loaded.size === 0) return;
    const { head, pruned } = await this.store.head();
    if (head === this.cursor) return;
    const foreign = head - this.cursor - this.own.countIn(this.cursor, head);
    // pruned before this process read them: fine when they were all its own (applied as written)
    const lost = pruned > this.cursor && this.own.countIn(this.cursor, pruned) < pruned - this.cursor;
    let loadedVectors = 0;
    for (const ix of this.loaded.values()) loadedVectors += ix.size;
    if (lost || foreign > Math.max(RELOAD_AFTER_MIN, loadedVectors)) {
      await this.reload(head);
    } else {
      this.cursor = Math.max(this.cursor, pruned);
      // seqs are never reused and commit in order, so a seq missing between the cursor and the head is
      // a change deleted from the log: an erasure's sweep takes the erased user's rows of it, its
      // deletes among them (a rolled-back write on PostgreSQL leaves one too). What it changed is not
      // known here, and the erased vectors must not stay in memory (nor their rows among the kept
      // candidates): the index is read again, and nothing more of the log is replayed first
      let gap = false;
      for (;;) {
        const changes = await this.store.since(this.cursor, CHANGES_PAGE);
        gap = changes.some((c, i) => c.seq !== (i === 0 ? this.cursor : changes[i - 1]!.seq) + 1);
        if (gap) break;
        const seen = new Set<string>();
        const reread = changes.filter((c) => {
          if (this.own.has(c.seq) || !this.loaded.has(c.embedder)) return false;
          const key = `${c.embedder}\u0000${c.user_id}\u0000${c.id}`;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
        // the entries as they are now, every part: later changes to them only repeat this. Each is
        // dropped and put back whole, so a part deleted meanwhile (an edit to a shorter text) goes
        // too. Read and put an entry at a time in the process's slices: another process's write of 30
        // turns of 32,000 characters (~1,800 passages) held an HTTP process of `serve --processes 2`
        // for its whole catch-up; no search sees the steps between (each waits for the lane)
        for (const c of reread) this.loaded.get(c.embedder)?.remove(c.user_id, c.id);
        for (const c of reread) {
          await room(this.sliceMs);
          for (const r of await this.store.current([c])) this.loaded.get(r.embedder)?.put(r.id, r.user_id, r.session_id, r.rowid, r.vector, r.part, r.created_ms);
        }
        if (changes.length > 0) this.cursor = changes[changes.length - 1]!.seq;
        if (changes.length < CHANGES_PAGE) break;
      }
      if (gap || this.cursor < head) await this.reload(Math.max(this.cursor, head));
    }
    this.own.dropThrough(this.cursor);
  }

  /** Every loaded index read again from the store, the cursor at `head` (changes after it are replayed later: putting a row again changes nothing). */
  private async reload(head: number): Promise<void> {
    this.listings.clear();
    for (const ix of this.loaded.values()) {
      ix.clear();
      await this.fill(ix);
    }
    this.cursor = head;
  }

  /**
   * Runs a write in this process's write chain (after every write called before it); once committed,
   * queues `apply` in the lane — before the call resolves, so a later search of this process sees
   * it — unless a catch-up already read its changes (then they were re-read from the store).
   */
  private async write<T>(run: (retain: number) => Promise<{ result: T; changes: ChangeRange }>, apply: (result: T) => void): Promise<T> {
    await this.flushNow();
    const done = this.writes.then(async () => {
      const { result, changes } = await run(this.retain);
      // queued here, in the chain: applies reach the lane in commit order
      void this.inLane(() => this.applyOwn([changes], () => apply(result)));
      return result;
    });
    this.writes = done.catch(() => {});
    return done;
  }

  /** `apply` of this process's writes logged in `ranges` (in order), unless a catch-up replayed them all */
  private async applyOwn(ranges: readonly ChangeRange[], apply: () => void | Promise<void>): Promise<void> {
    if (this.loaded.size === 0 || ranges.length === 0 || this.cursor >= ranges[ranges.length - 1]!.to) return;
    await apply();
    for (const r of ranges) this.own.add(r.from, r.to);
  }

  /** Commits what is pending now and waits for every write called before. */
  private async flushNow(): Promise<void> {
    if (this.pending.length > 0) await this.flush();
    else await this.writes;
  }

  /** Commits every pending upsert in one transaction; on failure, each call alone, so only the bad one fails. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.writes.then(() => {});
    const done = this.writes.then(async () => {
      try {
        await this.commit(batch);
        for (const u of batch) u.resolve();
      } catch (err) {
        // the database is away: every call of the batch would fail alike
        if (batch.length === 1 || err instanceof BackendUnavailableError) return batch.forEach((u) => u.reject(err));
        for (const u of batch) {
          try {
            await this.commit([u]);
            u.resolve();
          } catch (e) {
            u.reject(e);
          }
        }
      }
    });
    this.writes = done.catch(() => {});
    return done;
  }

  /**
   * Writes the calls' vectors a group at a time (flushGroups), in the process's slices of work
   * (src/pace.ts): the passages of 30 turns of 32,000 characters (~1,800 vectors) were one transaction
   * that held the event loop ~40 ms. They reach memory together once all are written, call by call as
   * one transaction's did, so the index holds them in the order any other process's catch-up gives.
   */
  private async commit(batch: readonly PendingUpsert[]): Promise<void> {
    const ranges: ChangeRange[] = [];
    // each call's points as the groups wrote them, with their rowids
    const written = batch.map((u) => ({ tag: u.tag, points: [] as VectorPoint[], rowids: [] as number[] }));
    for (const group of flushGroups(batch)) {
      await giveTurn();
      const { result, changes } = await this.store.upsert(group, this.retain);
      ranges.push(changes);
      group.forEach((part, i) => {
        written[part.call]!.points.push(...part.points);
        written[part.call]!.rowids.push(...result[i]!);
      });
    }
    void this.inLane(() =>
      this.applyOwn(ranges, async () => {
        for (const u of written) {
          const index = this.loaded.get(u.tag.id);
          if (!index || index.dim !== u.tag.dim) continue;
          // a call replaces its entries (the store deleted parts beyond the ones given): drop each
          // first, then put the points in the order given, so the rows lie where any other process's
          // catch-up puts them. In the process's slices: the ~1,800 passages of 30 turns of 32,000
          // characters held the event loop ~45 ms in one go; no search sees the steps between (each
          // waits for the lane)
          for (const { user_id, id } of lastParts(u.points)) index.remove(user_id, id);
          for (const [j, p] of u.points.entries()) {
            await room(this.sliceMs);
            index.put(p.id, p.payload.user_id, p.payload.session_id, u.rowids[j]!, p.vector, p.part ?? 0, Date.parse(p.payload.created_at));
          }
        }
      }),
    );
  }
}

/** the most vectors one transaction of a flush writes (more only when one entry has more passages) */
const FLUSH_POINTS = 256;

/** part of a call's points (`call`: its index in the batch) */
export interface CallPart {
  call: number;
  tag: EmbedderTag;
  points: VectorPoint[];
}

/**
 * The calls' points in groups of at most FLUSH_POINTS, a call split between its entries only, each
 * entry's points together where it first appears: the store trims the parts beyond an entry's last,
 * which must not remove a part another group writes.
 */
export function flushGroups(batch: ReadonlyArray<{ tag: EmbedderTag; points: readonly VectorPoint[] }>): CallPart[][] {
  const groups: CallPart[][] = [];
  let group: CallPart[] = [];
  let size = 0;
  batch.forEach(({ tag, points }, call) => {
    const entries = new Map<string, VectorPoint[]>();
    for (const p of points) {
      const key = `${p.payload.user_id}\u0000${p.id}`;
      const held = entries.get(key);
      if (held) held.push(p);
      else entries.set(key, [p]);
    }
    let part: VectorPoint[] = [];
    for (const entry of entries.values()) {
      if (size > 0 && size + entry.length > FLUSH_POINTS) {
        if (part.length > 0) group.push({ call, tag, points: part });
        groups.push(group);
        [group, part, size] = [[], [], 0];
      }
      part.push(...entry);
      size += entry.length;
    }
    if (part.length > 0) group.push({ call, tag, points: part });
  });
  if (group.length > 0) groups.push(group);
  return groups;
}

function isVectorStore(x: VectorStore | Db): x is VectorStore {
  return typeof (x as VectorStore).load === 'function' && typeof (x as VectorStore).since === 'function';
}
