import type { Arena } from './arena.js';
import { ACC_BYTES, BLOCK_ROWS, blockRowsOf, capacityFor, readRow, writeRow } from './layout.js';
import { quantizeInto } from './quantize.js';
import type { ScanThread } from './scan-thread.js';
import { MAX_R, SCRATCH_BYTES, splitScan } from './split-scan.js';
import { TopK } from './top-k.js';

/*
 * A kernel call starts at a layout block (layout.ts): chunks and zones are whole blocks of a big
 * partition, and a small one is a single block.
 */
/** rows scanned before the first threshold is known, then per kernel call (the threshold rises between calls) */
const FIRST_CHUNK = BLOCK_ROWS;
const CHUNK = 16 * BLOCK_ROWS;
/**
 * rows of one zone: the earliest and latest time of each zone's rows are kept, and a search of a time
 * skips the zones that hold none of it (rows are appended as turns come, so a zone holds a stretch of
 * a conversation)
 */
const ZONE = BLOCK_ROWS;
/**
 * a filter's allowed rows are handed to the scan as a byte a row from this many rows: the kernel skips
 * a block none of whose rows is allowed, and hands back only allowed rows. Below it the allowed Set is
 * tested on each row the kernel returns (a listing is only kept from
 * EmbeddedVectorIndexOptions.probeFrom rows, 4,096 by default, and a mask is built once a listing and
 * version)
 */
const MASK_FROM = 4_096;

/** A helper thread to share big scans with, and from how many rows a scan is shared. */
export interface ScanSplit {
  thread: ScanThread;
  minRows: number;
}

/** A time filter in epoch milliseconds: created at or after `from`, strictly before `before`. */
export interface CreatedSpan {
  from: number;
  before: number;
}

/** A user's partition as a filtered search's plan sees it (EmbedderIndex.shape). */
export interface PartitionShape {
  readonly n: number;
  /** bumped by every put and remove: what was read of the user's rows at one version holds while it lasts */
  readonly version: number;
  rowsOfSessions(sessionIds: readonly string[]): number;
  hint(key: string): number | undefined;
  setHint(key: string, share: number): void;
}

/** a row's key: an entry's whole-text vector is its id, a passage's the id and its part */
const slotKey = (id: string, part: number): string => (part === 0 ? id : `${id}\u0000${part}`);

/**
 * The vectors of one user under one embedder: `cap` int8 rows in one arena block, contiguous, so a
 * search scans exactly the user's vectors and nothing else, laid out in blocks of `sb` rows
 * (layout.ts); their scales in a second block (the kernel reads them). Beside each row, in JS arrays:
 * its id, its SQLite rowid (for the exact rerank), its session and its time (a time filter is tested
 * here, not listed from the store: each query names its own time, so a listing would serve one
 * query). An entry has one row per part (its whole text, and each passage of a long turn). Removal
 * moves the last row into the hole, keeping the rows dense.
 */
export class Partition implements PartitionShape {
  n = 0;
  version = 0;
  private cap = 0;
  /** rows of a layout block (layout.ts): the whole capacity of a small partition, BLOCK_ROWS of a big one */
  private sb = 0;
  private block = 0;
  /** byte offset of the float32 scales in the arena */
  private scalesBlock = 0;
  private ids: string[] = [];
  /** each row's slotKey */
  private keys: string[] = [];
  /** the highest part held of each id that has passages (most have none: no entry) */
  private readonly lastPart = new Map<string, number>();
  private rowids = new Float64Array(0);
  private sessions = new Int32Array(0);
  private created = new Float64Array(0);
  /**
   * per zone, bounds on its rows' times: widened by every time put in it, never narrowed (a row that
   * moves out on a removal leaves them wider than they need be until the next load), so a zone
   * skipped holds no row of the time
   */
  private zoneFrom = new Float64Array(0);
  private zoneTo = new Float64Array(0);
  private readonly slots = new Map<string, number>();
  private readonly sessionNumbers = new Map<string, number>();
  /** rows held of each session, by session number */
  private readonly sessionRows: number[] = [];
  /**
   * what share of the rows each retrieval filter (by its key) allowed when last seen: how a filtered
   * search chooses between probing the unfiltered ranking and listing the allowed rows (a hint only,
   * never a result: kept across writes, and a stale one costs time, not correctness)
   */
  private readonly hints = new Map<string, number>();
  /** one row's codes on their way in or out of the layout */
  private readonly codes: Int8Array;
  /** each allowed Set's mask (masked scans), while the partition is at the version it was built at */
  private readonly masks = new WeakMap<ReadonlySet<number>, { version: number; bytes: Uint8Array }>();

  constructor(
    readonly userId: string,
    private readonly arena: Arena,
    private readonly stride: number,
    private readonly split: ScanSplit | null = null,
  ) {
    this.codes = new Int8Array(stride);
  }

  /** scratch bytes `nearest` needs over `n` rows (after the encoded query): results, a mask, a block's sums */
  static outBytes(n: number): number {
    return Math.max(resultBytes(n) + maskBytes(n) + ACC_BYTES, SCRATCH_BYTES);
  }

  /** Makes room for `n` rows in all (a load knows each user's count: no regrowth, no holes). */
  reserve(n: number): void {
    if (n > this.cap) this.resize(capacityFor(n));
  }

  /** Inserts or replaces the vector of `id`'s `part`; true when the row is new. */
  put(id: string, sessionId: string, rowid: number, vector: Float32Array, part: number, createdMs: number): boolean {
    const key = slotKey(id, part);
    let slot = this.slots.get(key);
    const added = slot === undefined;
    this.version++;
    if (slot === undefined) {
      if (this.n === this.cap) this.resize(capacityFor(Math.ceil(this.cap * 1.5) + 1));
      slot = this.n++;
      this.slots.set(key, slot);
      this.ids[slot] = id;
      this.keys[slot] = key;
      if (part > 0 && part > (this.lastPart.get(id) ?? 0)) this.lastPart.set(id, part);
    }
    const codes = this.codes.fill(0);
    const scale = quantizeInto(vector, codes, 0);
    writeRow(this.arena.i8, this.block, this.stride, this.sb, slot, codes);
    this.arena.f32[this.scalesBlock / 4 + slot] = scale;
    this.rowids[slot] = rowid;
    this.created[slot] = createdMs;
    this.widenZone(slot, createdMs);
    const session = this.sessionNumber(sessionId);
    if (!added) this.sessionRows[this.sessions[slot]!]!--;
    this.sessionRows[session] = (this.sessionRows[session] ?? 0) + 1;
    this.sessions[slot] = session;
    return added;
  }

  /** Removes every part of `id`; returns how many rows went. */
  remove(id: string): number {
    const last = this.lastPart.get(id) ?? 0;
    this.lastPart.delete(id);
    let removed = 0;
    for (let part = 0; part <= last; part++) if (this.removeSlot(slotKey(id, part))) removed++;
    return removed;
  }

  private removeSlot(key: string): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.slots.delete(key);
    this.version++;
    this.sessionRows[this.sessions[slot]!]!--;
    const last = --this.n;
    if (slot !== last) {
      readRow(this.arena.i8, this.block, this.stride, this.sb, last, this.codes);
      writeRow(this.arena.i8, this.block, this.stride, this.sb, slot, this.codes);
      const moved = this.keys[last]!;
      this.ids[slot] = this.ids[last]!;
      this.keys[slot] = moved;
      const f32 = this.arena.f32;
      f32[this.scalesBlock / 4 + slot] = f32[this.scalesBlock / 4 + last]!;
      this.rowids[slot] = this.rowids[last]!;
      this.sessions[slot] = this.sessions[last]!;
      this.created[slot] = this.created[last]!;
      this.widenZone(slot, this.created[slot]!);
      this.slots.set(moved, slot);
    }
    this.ids.length = this.n;
    this.keys.length = this.n;
    return true;
  }

  /**
   * The `r` rows nearest to the query by the int8 scan, best first, as SQLite rowids (and ids, to
   * check the row still holds the same vector). `query` holds the query encoded (layout.ts,
   * encodeQuery); `out` has room for `Partition.outBytes(n)`. `allowed`: only these rowids compete (a
   * retrieval filter), so the r best are the r best matching rows; `span`: only rows of that time.
   * `share`: the scan may be split with the helper thread.
   */
  nearest(query: number, out: number, r: number, sessionId: string | undefined, allowed?: ReadonlySet<number>, share = true, span?: CreatedSpan): { rowids: number[]; ids: string[] } {
    const session = sessionId === undefined ? -1 : this.sessionNumbers.get(sessionId);
    if (this.n === 0 || session === undefined) return { rowids: [], ids: [] };
    r = Math.min(r, this.n);
    const rowids: number[] = [];
    const ids: string[] = [];
    const every = session < 0 && !allowed && !span;
    const slots = share && every ? this.splitScan(query, out, r) : null;
    if (slots) {
      for (const slot of slots) (rowids.push(this.rowids[slot]!), ids.push(this.ids[slot]!));
      return { rowids, ids };
    }
    const top = new TopK(r);
    this.scan(query, out, top, session, allowed, span);
    for (let i = 0; i < top.size; i++) {
      const slot = top.items[i]!;
      rowids.push(this.rowids[slot]!);
      ids.push(this.ids[slot]!);
    }
    return { rowids, ids };
  }

  /**
   * Every row, shared with the helper thread (split-scan.ts) when the partition is big enough and the
   * helper is up: the same r rows as `scan`, best first. Null: scan on this thread alone.
   */
  private splitScan(query: number, out: number, r: number): number[] | null {
    const split = this.split;
    if (!split || this.n < split.minRows || r > MAX_R) return null;
    const a = this.arena;
    const memoryId = split.thread.ready(a.memory);
    if (memoryId === null) return null;
    // before the views are read: its first allocation may grow the memory
    const helperOut = a.helperOut(SCRATCH_BYTES);
    const job = { query, base: this.block, scales: this.scalesBlock, rows: this.n, stride: this.stride, sb: this.sb, r };
    const { slots, helped } = splitScan(a.kernels, a.i32, a.f32, split.thread.ctrl, memoryId, job, out, helperOut, () => split.thread.wake());
    split.thread.scans++;
    split.thread.helped += helped;
    return slots;
  }

  /**
   * The rows a search may rank — all of them, or one session's (`session` ≥ 0), those of a time
   * (`span`) and/or those whose rowid is `allowed` (a retrieval filter). The kernel scores and
   * thresholds in one pass and hands back only the rows above the current k-th best, so JS touches a
   * few hundred rows, not all of them; those are tested here, and a time's scan reads only the zones
   * that hold rows of it. The threshold rises only with rows that pass, so a row is kept exactly when
   * it passes and beats the k-th best passing row before it, as a row-by-row loop would. (A filtered
   * scan that scored every row, then tested each in JS, made a time-filtered search of 100k vectors
   * ~1.6× a plain one.)
   */
  private scan(query: number, out: number, top: TopK, session: number, allowed: ReadonlySet<number> | undefined, span: CreatedSpan | undefined): void {
    const a = this.arena;
    const { sessions, rowids, created } = this;
    const from = span?.from ?? -Infinity;
    const before = span?.before ?? Infinity;
    // after the kernel's results: the mask's room, then a block's sums
    const maskAt = out + resultBytes(this.n);
    const mask = allowed && this.n >= MASK_FROM ? this.maskOf(allowed, maskAt) : -1;
    const acc = maskAt + maskBytes(this.n);
    const { stride, sb } = this;
    const tested = mask < 0 ? allowed : undefined;
    for (const [start, end] of this.zonesOf(from, before)) {
      for (let at = start; at < end; ) {
        const count = Math.min(top.size < top.k ? FIRST_CHUNK : CHUNK, end - at);
        const rows = this.block + at * stride;
        const scales = this.scalesBlock + at * 4;
        const found =
          mask >= 0
            ? a.kernels.scanTopMasked(query, rows, scales, mask + at, count, stride, sb, top.floor, out, acc)
            : a.kernels.scanTop(query, rows, scales, count, stride, sb, top.floor, out, acc);
        const i32 = a.i32;
        const f32 = a.f32;
        for (let c = 0, o = out / 4; c < found; c++, o += 2) {
          const i = at + i32[o]!;
          if (session >= 0 && sessions[i] !== session) continue;
          if (created[i]! < from || created[i]! >= before) continue;
          // the Set last: a lookup costs more than the tests above
          if (tested && !tested.has(rowids[i]!)) continue;
          top.push(i, f32[o + 1]!);
        }
        at += count;
      }
    }
  }

  /**
   * `allowed` as a byte a row (1: allowed) at `offset` in the arena, for scanTopMasked. Built once a Set
   * and version (a kept listing is the same Set search after search: ListingCache): a metadata filter
   * keeping a quarter of 100k real turns of one user was scored on every row and tested on each row
   * above the floor, ~2× the CPU of a plain search's scan.
   */
  private maskOf(allowed: ReadonlySet<number>, offset: number): number {
    let held = this.masks.get(allowed);
    if (!held || held.version !== this.version) {
      const bytes = new Uint8Array(this.n);
      for (let i = 0; i < this.n; i++) if (allowed.has(this.rowids[i]!)) bytes[i] = 1;
      held = { version: this.version, bytes };
      this.masks.set(allowed, held);
    }
    this.arena.u8.set(held.bytes, offset);
    return offset;
  }

  /** the stretches of rows [start, end) whose zones may hold a row created in [from, before) */
  private zonesOf(from: number, before: number): Array<[number, number]> {
    if (from === -Infinity && before === Infinity) return [[0, this.n]];
    const out: Array<[number, number]> = [];
    for (let z = 0, start = 0; start < this.n; z++, start += ZONE) {
      if (this.zoneTo[z]! < from || this.zoneFrom[z]! >= before) continue;
      const end = Math.min(this.n, start + ZONE);
      const last = out[out.length - 1];
      if (last && last[1] === start) last[1] = end;
      else out.push([start, end]);
    }
    return out;
  }

  private widenZone(slot: number, createdMs: number): void {
    const z = Math.floor(slot / ZONE);
    if (createdMs < this.zoneFrom[z]!) this.zoneFrom[z] = createdMs;
    if (createdMs > this.zoneTo[z]!) this.zoneTo[z] = createdMs;
  }

  /** How many rows belong to these sessions (an upper bound on what a session_ids filter allows). */
  rowsOfSessions(sessionIds: readonly string[]): number {
    let n = 0;
    for (const id of new Set(sessionIds)) {
      const s = this.sessionNumbers.get(id);
      if (s !== undefined) n += this.sessionRows[s] ?? 0;
    }
    return n;
  }

  /** The share of rows the filter of this key allowed when last seen (undefined: never seen). */
  hint(key: string): number | undefined {
    return this.hints.get(key);
  }

  setHint(key: string, share: number): void {
    if (this.hints.size >= 64 && !this.hints.has(key)) this.hints.clear();
    this.hints.set(key, share);
  }

  /** Gives the block back to the arena (the partition is empty or being dropped). */
  release(): void {
    if (this.cap > 0) {
      this.arena.release(this.block, this.cap * this.stride);
      this.arena.release(this.scalesBlock, scalesBytes(this.cap));
    }
    this.cap = 0;
    this.n = 0;
    this.zoneFrom = new Float64Array(0);
    this.zoneTo = new Float64Array(0);
  }

  private sessionNumber(sessionId: string): number {
    let n = this.sessionNumbers.get(sessionId);
    if (n === undefined) this.sessionNumbers.set(sessionId, (n = this.sessionNumbers.size));
    return n;
  }

  /** Grows to `cap` rows (capacityFor's). A small partition's block grows with it, so its rows are laid out again. */
  private resize(cap: number): void {
    const a = this.arena;
    const sb = blockRowsOf(cap);
    if (this.cap === 0) this.block = a.alloc(cap * this.stride);
    else if (sb !== this.sb) {
      const block = a.alloc(cap * this.stride);
      for (let slot = 0; slot < this.n; slot++) {
        readRow(a.i8, this.block, this.stride, this.sb, slot, this.codes);
        writeRow(a.i8, block, this.stride, sb, slot, this.codes);
      }
      a.release(this.block, this.cap * this.stride);
      this.block = block;
    } else if (!a.extend(this.block, this.cap * this.stride, cap * this.stride)) {
      // whole blocks of BLOCK_ROWS rows: they keep their layout wherever they are (the blocks holding rows)
      const block = a.alloc(cap * this.stride);
      a.u8.copyWithin(block, this.block, this.block + Math.ceil(this.n / sb) * sb * this.stride);
      a.release(this.block, this.cap * this.stride);
      this.block = block;
    }
    this.sb = sb;
    const scales = a.alloc(scalesBytes(cap));
    if (this.cap > 0) {
      a.u8.copyWithin(scales, this.scalesBlock, this.scalesBlock + this.n * 4);
      a.release(this.scalesBlock, scalesBytes(this.cap));
    }
    this.scalesBlock = scales;
    this.rowids = grown(this.rowids, new Float64Array(cap), this.n);
    this.sessions = grown(this.sessions, new Int32Array(cap), this.n);
    this.created = grown(this.created, new Float64Array(cap), this.n);
    const zones = Math.ceil(cap / ZONE);
    if (zones > this.zoneFrom.length) {
      this.zoneFrom = grown(this.zoneFrom, new Float64Array(zones).fill(Infinity), this.zoneFrom.length);
      this.zoneTo = grown(this.zoneTo, new Float64Array(zones).fill(-Infinity), this.zoneTo.length);
    }
    this.cap = cap;
  }
}

const roundUp16 = (bytes: number): number => Math.ceil(bytes / 16) * 16;

/** a mask of `n` rows: the kernel reads it 16 bytes at a time */
const maskBytes = (n: number): number => roundUp16(n) + 16;

/** the kernel's results over `n` rows: (row, score) pairs of a chunk, or an int32 a row */
const resultBytes = (n: number): number => roundUp16(Math.max(n * 4, Math.min(n, CHUNK) * 8));

/** the scales block of `cap` rows, rounded to the arena's 16-byte blocks */
function scalesBytes(cap: number): number {
  return roundUp16(cap * 4);
}

function grown<T extends Float64Array | Int32Array>(from: T, to: T, n: number): T {
  to.set(from.subarray(0, n) as never);
  return to;
}
