import { setImmediate as nextTurn } from 'node:timers/promises';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

/**
 * The cl100k_base tokenizer, counting only: the same pieces (its pre-tokenizer regex) and the same
 * merges (lowest rank first, leftmost among equal ranks) as js-tiktoken's `encode`, so the counts are
 * identical, but in O(n log n) of the input on any text. js-tiktoken's merge rescans and re-joins every
 * pair of a piece after each merge (cubic in the piece's bytes): a piece it does not know whole costs
 * ~2 µs per byte even when short (Russian or Chinese prose, 32,000 characters: 200–550 ms) and a long
 * one never ends (a tab × 32,000 is one piece). Here every pair is looked up once when it forms and
 * the lowest is taken from a heap. Special-token markers are plain text, as `encode(text, [], [])`.
 */

/** A binary min-heap of numbers (rank × POS + start keys). */
class MinHeapOf {
  private items: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Float64Array(capacity);
  }

  clear(): void {
    this.size = 0;
  }

  push(v: number): void {
    if (this.size === this.items.length) {
      const grown = new Float64Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    const a = this.items;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }

  /** adds a value without keeping the heap order: `heapify` restores it, in O(n) for all such adds */
  append(v: number): void {
    if (this.size === this.items.length) {
      const grown = new Float64Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.size++] = v;
  }

  heapify(): void {
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.siftDown(i, this.items[i]!);
  }

  private siftDown(from: number, v: number): void {
    const a = this.items;
    const n = this.size;
    let i = from;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && a[c + 1]! < a[c]!) c++;
      if (a[c]! >= v) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = v;
  }

  pop(): number {
    const top = this.items[0]!;
    const last = this.items[--this.size]!;
    if (this.size > 0) this.siftDown(0, last);
    return top;
  }
}

/** a piece's bytes as a string of char codes 0–255: the key of the rank table */
type ByteString = string;

let table: Map<ByteString, number> | null = null;
/** rank of each two-byte token by (first byte << 8 | second), -1 for none: the first pairs of every piece */
const pairRanks = new Int32Array(65_536).fill(-1);

/** rank-table entries built in one turn of the event loop by ranksSoon (~1–4 ms) */
export const RANKS_PER_TURN = 2_048;

/** entries of the rank table built so far (what a test watches the building by) */
let built = 0;

/**
 * The table's building, one step per RANKS_PER_TURN entries; ranks() and ranksSoon() share it. The
 * ranks are one line of ~100,000 base64 tokens (`! <first rank> <token> <token> …`, a line again where
 * a rank is skipped), read a token at a time: split whole, the line alone took ~70 ms.
 */
const building: Generator<void, void, void> = (function* () {
  const t = new Map<ByteString, number>();
  const text = cl100k.bpe_ranks;
  for (let line = 0; line < text.length; ) {
    const newline = text.indexOf('\n', line);
    const eol = newline < 0 ? text.length : newline;
    const first = text.indexOf(' ', line);
    const second = first < 0 || first >= eol ? -1 : text.indexOf(' ', first + 1);
    if (second > 0 && second < eol) {
      let rank = Number.parseInt(text.slice(first + 1, second), 10);
      for (let at = second + 1; at < eol; rank++) {
        const space = text.indexOf(' ', at);
        const end = space < 0 || space > eol ? eol : space;
        const bytes = Buffer.from(text.slice(at, end), 'base64').toString('latin1');
        t.set(bytes, rank);
        if (bytes.length === 2) pairRanks[(bytes.charCodeAt(0) << 8) | bytes.charCodeAt(1)] = rank;
        at = end + 1;
        if (++built % RANKS_PER_TURN === 0) yield;
      }
    }
    line = eol + 1;
  }
  table = t;
})();

/** rank of every token of cl100k_base (~100k entries): built once per process, what is left of it now */
function ranks(): Map<ByteString, number> {
  while (!table) step();
  return table;
}

/** one step of the building (a step that ends it without a table is an error, never a loop) */
function step(): void {
  if (building.next().done && !table) throw new Error('the cl100k rank table could not be built');
}

/** how many entries of the rank table are built */
export function ranksBuilt(): number {
  return built;
}

/**
 * Builds the rank table now when it is not built yet: 100–300 ms of synchronous work that a process
 * serving requests does before it listens, not inside the first request that counts tokens.
 */
export function loadRanks(): void {
  ranks();
}

/**
 * The rank table, built RANKS_PER_TURN entries a turn of the event loop when it is not built yet:
 * what countSoon and truncateSoon wait for first, so that the first count of a process that did not
 * build it before answering (a program using the library) holds no other request 100–300 ms.
 */
export async function ranksSoon(): Promise<void> {
  while (!table) {
    step();
    if (!table) await nextTurn();
  }
}

/** the pre-tokenizer: linear in V8 on any input (no nested quantifier backtracks over a run more than once) */
const PIECES = new RegExp(cl100k.pat_str, 'gu');

/** each piece of the text (as the regex cuts it) with its start index in the text */
export function* piecesOf(text: string): Generator<[piece: string, start: number], void, void> {
  const re = new RegExp(PIECES);
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) yield [m[0], m.index];
}

export function pieceBytes(piece: string): ByteString {
  for (let i = 0; i < piece.length; i++) if (piece.charCodeAt(i) >= 0x80) return Buffer.from(piece, 'utf8').toString('latin1');
  return piece; // ASCII: its UTF-8 bytes are its char codes
}

/**
 * One piece's merge: a min-heap of (rank, start) over the adjacent pairs, entries checked when taken (a
 * pair whose parts changed since it was pushed has another byte range, so another rank or none): the
 * order of merges is exactly the rescanning one's. `run` goes on where it stopped, so a long piece can
 * be merged a slice of the event loop at a time (TokenCounter.countSoon).
 */
class Merge {
  private next: Int32Array;
  private prev: Int32Array;
  private dead: Uint8Array;
  private readonly heap: MinHeapOf;
  private bytes: ByteString = '';

  constructor(capacity: number) {
    this.next = new Int32Array(capacity);
    this.prev = new Int32Array(capacity);
    this.dead = new Uint8Array(capacity);
    this.heap = new MinHeapOf(Math.max(512, capacity));
  }

  /** starts the merge of a piece of at least two bytes that is not a token whole */
  start(bytes: ByteString): void {
    const m = bytes.length;
    if (this.next.length < m) {
      this.next = new Int32Array(m * 2);
      this.prev = new Int32Array(m * 2);
      this.dead = new Uint8Array(m * 2);
    }
    this.bytes = bytes;
    const { next, prev, dead, heap } = this;
    heap.clear();
    for (let i = 0; i < m; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      dead[i] = 0;
    }
    // every first pair at once, then ordered in O(n): pushing each kept a 32,000-byte piece's start
    // in O(n log n), a few milliseconds before countSoon's first slice
    for (let i = 0; i + 1 < m; i++) {
      const rank = pairRanks[(bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1)]!;
      if (rank >= 0) heap.append(rank * POS + i);
    }
    heap.heapify();
  }

  /** takes at most `pops` pairs off the heap; true when the merge is done */
  run(pops: number): boolean {
    const { next, prev, dead, heap, bytes } = this;
    const m = bytes.length;
    const r = ranks();
    const push = (start: number, end: number): void => {
      const rank = r.get(bytes.slice(start, end));
      if (rank !== undefined) heap.push(rank * POS + start);
    };
    let taken = 0;
    for (; heap.size > 0 && taken < pops; taken++) {
      const key = heap.pop();
      const start = key % POS;
      const rank = (key - start) / POS;
      if (dead[start]) continue;
      const mid = next[start]!;
      if (mid >= m) continue;
      const end = next[mid]!;
      if (r.get(bytes.slice(start, end)) !== rank) continue; // stale: a part changed since
      dead[mid] = 1;
      next[start] = end;
      if (end < m) prev[end] = start;
      if (start > 0) push(prev[start]!, end);
      if (end < m) push(start, next[end]!);
    }
    popped += taken;
    return heap.size === 0;
  }

  starts(): number[] {
    const starts: number[] = [];
    for (let i = 0; i < this.bytes.length; i = this.next[i]!) starts.push(i);
    return starts;
  }
}

/** pairs taken off a merge's heap in this process (see mergeWork) */
let popped = 0;

/**
 * The merging work done in this process so far, in pairs taken off a heap (~0.5 µs each, a few per
 * byte of a piece): a measure of the tokenizer's work that no clock or load changes.
 */
export function mergeWork(): number {
  return popped;
}

/** the merge of `tokenStarts`, its arrays reused (one thread, and it runs to its end: no re-entry) */
const shared = new Merge(256);

/** true when a piece's tokens are known without a merge (empty, one byte, or a token whole) */
function whole(bytes: ByteString): boolean {
  return bytes.length <= 1 || ranks().has(bytes);
}

/** The start offsets (in bytes) of the tokens BPE cuts a piece into, the first one 0. */
export function tokenStarts(bytes: ByteString): number[] {
  if (whole(bytes)) return bytes.length === 0 ? [] : [0];
  shared.start(bytes);
  shared.run(Number.POSITIVE_INFINITY);
  return shared.starts();
}

/**
 * `tokenStarts`, a slice at a time: the generator stops after every `pops` pairs taken off the heap
 * (~0.5 µs each) until the merge is done, and returns the starts. Its arrays are its own, so merges
 * of other texts may run while it waits.
 */
export function* tokenStartsInSlices(bytes: ByteString, pops: number): Generator<void, number[], void> {
  if (whole(bytes)) return bytes.length === 0 ? [] : [0];
  const merge = new Merge(bytes.length);
  merge.start(bytes);
  while (!merge.run(pops)) yield;
  return merge.starts();
}

/**
 * Positions in keys: 2^20, so a piece of up to a million bytes keeps exact keys (rank < 2^17, so a key
 * stays below 2^37, far inside a double's 2^53).
 */
const POS = 2 ** 20;
/** the longest piece whose tokens are found exactly (POS): a longer one is counted one token per byte */
export const MAX_PIECE_BYTES = POS;

