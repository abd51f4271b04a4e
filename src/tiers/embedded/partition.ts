import type { Arena } from './arena.js';
import { quantizeInto } from './quantize.js';
import { TopK } from './top-k.js';

const MIN_CAPACITY = 8;

/**
 * The vectors of one user under one embedder: `cap` int8 rows in one arena block, contiguous, so a
 * search scans exactly the user's vectors and nothing else. Beside each row, in JS arrays: its id,
 * its scale, its SQLite rowid (for the exact rerank) and its session. Removal moves the last row into
 * the hole, keeping the rows dense.
 */
export class Partition {
  n = 0;
  private cap = 0;
  private block = 0;
  private ids: string[] = [];
  private scales = new Float32Array(0);
  private rowids = new Float64Array(0);
  private sessions = new Int32Array(0);
  private readonly slots = new Map<string, number>();
  private readonly sessionNumbers = new Map<string, number>();

  constructor(
    readonly userId: string,
    private readonly arena: Arena,
    private readonly stride: number,
  ) {}

  /** Makes room for `n` rows in all (a load knows each user's count: no regrowth, no holes). */
  reserve(n: number): void {
    if (n > this.cap) this.resize(n);
  }

  /** Inserts or replaces the vector of `id`. */
  put(id: string, sessionId: string, rowid: number, vector: Float32Array): void {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.n === this.cap) this.resize(Math.max(MIN_CAPACITY, Math.ceil(this.cap * 1.5)));
      slot = this.n++;
      this.slots.set(id, slot);
      this.ids[slot] = id;
    }
    const codes = this.arena.i8;
    const row = this.block + slot * this.stride;
    codes.fill(0, row + vector.length, row + this.stride);
    this.scales[slot] = quantizeInto(vector, codes, row);
    this.rowids[slot] = rowid;
    this.sessions[slot] = this.sessionNumber(sessionId);
  }

  remove(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.slots.delete(id);
    const last = --this.n;
    if (slot !== last) {
      const rows = this.block;
      this.arena.u8.copyWithin(rows + slot * this.stride, rows + last * this.stride, rows + (last + 1) * this.stride);
      const moved = this.ids[last]!;
      this.ids[slot] = moved;
      this.scales[slot] = this.scales[last]!;
      this.rowids[slot] = this.rowids[last]!;
      this.sessions[slot] = this.sessions[last]!;
      this.slots.set(moved, slot);
    }
    this.ids.length = this.n;
    return true;
  }

  /**
   * The `r` rows nearest to the query by the int8 scan, best first, as SQLite rowids (and ids, to
   * check the row still holds the same vector). `q16Offset` holds the query's codes widened to int16;
   * `outOffset` has room for `n` int32 results.
   */
  nearest(q16Offset: number, outOffset: number, r: number, sessionId: string | undefined): { rowids: number[]; ids: string[] } {
    const session = sessionId === undefined ? -1 : this.sessionNumbers.get(sessionId);
    if (this.n === 0 || session === undefined) return { rowids: [], ids: [] };
    const a = this.arena;
    a.kernels.dotI8(q16Offset, this.block, this.n, this.stride, outOffset);
    const dots = a.i32;
    const base = outOffset / 4;
    const { scales, sessions } = this;
    const top = new TopK(Math.min(r, this.n));
    let floor = -Infinity;
    for (let i = 0; i < this.n; i++) {
      const s = dots[base + i]! * scales[i]!;
      if (s > floor && (session < 0 || sessions[i] === session)) {
        top.push(i, s);
        floor = top.floor;
      }
    }
    const rowids: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < top.size; i++) {
      const slot = top.items[i]!;
      rowids.push(this.rowids[slot]!);
      ids.push(this.ids[slot]!);
    }
    return { rowids, ids };
  }

  /** Gives the block back to the arena (the partition is empty or being dropped). */
  release(): void {
    if (this.cap > 0) this.arena.release(this.block, this.cap * this.stride);
    this.cap = 0;
    this.n = 0;
  }

  private sessionNumber(sessionId: string): number {
    let n = this.sessionNumbers.get(sessionId);
    if (n === undefined) this.sessionNumbers.set(sessionId, (n = this.sessionNumbers.size));
    return n;
  }

  private resize(cap: number): void {
    const a = this.arena;
    if (this.cap === 0) this.block = a.alloc(cap * this.stride);
    else if (!a.extend(this.block, this.cap * this.stride, cap * this.stride)) {
      const block = a.alloc(cap * this.stride);
      a.u8.copyWithin(block, this.block, this.block + this.n * this.stride);
      a.release(this.block, this.cap * this.stride);
      this.block = block;
    }
    this.scales = grown(this.scales, new Float32Array(cap), this.n);
    this.rowids = grown(this.rowids, new Float64Array(cap), this.n);
    this.sessions = grown(this.sessions, new Int32Array(cap), this.n);
    this.cap = cap;
  }
}

function grown<T extends Float32Array | Float64Array | Int32Array>(from: T, to: T, n: number): T {
  to.set(from.subarray(0, n) as never);
  return to;
}
