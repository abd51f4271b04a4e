import { Arena } from './arena.js';
import { CandidateRows } from './candidate-rows.js';
import { encodeQuery, queryBytes } from './layout.js';
import { Partition, type CreatedSpan, type PartitionShape, type ScanSplit } from './partition.js';
import { quantizeInto, strideFor } from './quantize.js';
import { scanThread } from './scan-thread.js';

/**
 * A user's scan is shared with the helper thread from this many vectors: below it the scan takes
 * under ~0.5 ms on one core and waking a thread is not worth it.
 */
const SPLIT_MIN_ROWS = 16_384;

/** ids are their user's: (user, id) names one entry (its whole text and any passages) */
const keyOf = (userId: string, id: string): string => `${userId}\u0000${id}`;

/**
 * The in-memory side of one embedder's vectors: a partition per user, in one arena. It knows ids,
 * users, sessions and SQLite rowids, not payloads; those stay in the file and are read for the few
 * rows a search returns, and the rows of recent searches' candidates are kept (`candidates`) while
 * nothing is removed from here.
 */
export class EmbedderIndex {
  readonly stride: number;
  readonly candidates = new CandidateRows();
  private arena = new Arena();
  private partitions = new Map<string, Partition>();
  private where = new Map<string, Partition>();
  /** rows held: an entry's passages are rows of their own */
  private rows = 0;
  /** a query's codes before they are encoded for the kernel */
  private readonly queryCodes: Int16Array;

  private readonly split: ScanSplit | null;

  /** `split`: whether (and from how many vectors) big scans are shared with the helper thread */
  constructor(
    readonly id: string,
    readonly dim: number,
    split: { minRows: number } | false = { minRows: SPLIT_MIN_ROWS },
  ) {
    this.stride = strideFor(dim);
    this.queryCodes = new Int16Array(this.stride);
    this.split = split ? { thread: scanThread(), minRows: split.minRows } : null;
  }

  /** vectors held (passages included) */
  get size(): number {
    return this.rows;
  }

  /** Sizes the user's partition for `n` vectors before a load puts them. */
  reserve(userId: string, n: number): void {
    let p = this.partitions.get(userId);
    if (!p) this.partitions.set(userId, (p = new Partition(userId, this.arena, this.stride, this.split)));
    p.reserve(n);
  }

  put(id: string, userId: string, sessionId: string, rowid: number, vector: Float32Array, part: number, createdMs: number): void {
    if (vector.length !== this.dim) return; // a row of another dimension under the same id is never searched
    let p = this.partitions.get(userId);
    if (!p) this.partitions.set(userId, (p = new Partition(userId, this.arena, this.stride, this.split)));
    if (p.put(id, sessionId, rowid, vector, part, createdMs)) this.rows++;
    this.where.set(keyOf(userId, id), p);
  }

  /** Removes every part of the entry. */
  remove(userId: string, id: string): void {
    const key = keyOf(userId, id);
    const p = this.where.get(key);
    if (!p) return;
    this.candidates.drop();
    this.rows -= p.remove(id);
    this.where.delete(key);
    if (p.n === 0) {
      p.release();
      this.partitions.delete(p.userId);
    }
  }

  /** Drops every vector and starts a fresh arena (the old memory is freed with it). */
  clear(): void {
    this.arena = new Arena();
    this.partitions = new Map();
    this.where = new Map();
    this.rows = 0;
    this.candidates.drop();
  }

  /**
   * The user's `r` nearest rows by the quantized scan, best first (among `allowed` rowids and within
   * `span`, when given). `share`: a big scan may be shared with the helper thread (false: this thread
   * alone).
   */
  nearest(query: Float32Array, userId: string, sessionId: string | undefined, r: number, allowed?: ReadonlySet<number>, share = true, span?: CreatedSpan): { rowids: number[]; ids: string[] } {
    const p = this.partitions.get(userId);
    if (!p || p.n === 0) return { rowids: [], ids: [] };
    const bytes = queryBytes(this.stride);
    const at = this.arena.scratch(bytes + Partition.outBytes(p.n));
    const codes = this.queryCodes.fill(0);
    quantizeInto(query, codes, 0);
    encodeQuery(codes, this.stride, this.arena.i16, this.arena.i32, at);
    return p.nearest(at, at + bytes, r, sessionId, allowed, share, span);
  }

  /**
   * What a filtered search of the user weighs its plan with (see EmbeddedVectorIndex.search): the
   * user's rows, those of some sessions, and the share of rows each filter allowed when last seen.
   * Undefined when the user holds no vector.
   */
  shape(userId: string): PartitionShape | undefined {
    const p = this.partitions.get(userId);
    return p && p.n > 0 ? p : undefined;
  }

  stats(): { vectors: number; users: number; arenaBytes: number; arenaUsed: number } {
    const a = this.arena.stats();
    return { vectors: this.rows, users: this.partitions.size, arenaBytes: a.reserved, arenaUsed: a.used };
  }
}
