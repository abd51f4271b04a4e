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

  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a[--this.size]!;
    let i = 0;
    const n = this.size;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && a[c + 1]! < a[c]!) c++;
      if (a[c]! >= last) break;
      a[i] = a[c]!;
      i = c;
    }
    if (n > 0) a[i] = last;
    return top;
  }
}

/** a piece's bytes as a string of char codes 0–255: the key of the rank table */
type ByteString = string;

let table: Map<ByteString, number> | null = null;
/** rank of each two-byte token by (first byte << 8 | second), -1 for none: the first pairs of every piece */
const pairRanks = new Int32Array(65_536).fill(-1);

/** rank of every token of cl100k_base, built once per process on first use (~100k entries) */
function ranks(): Map<ByteString, number> {
  if (table) return table;
  const t = new Map<ByteString, number>();
  for (const line of cl100k.bpe_ranks.split('\n')) {
    if (line === '') continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1]!, 10);
    for (let i = 2; i < fields.length; i++) {
      const bytes = Buffer.from(fields[i]!, 'base64').toString('latin1');
      t.set(bytes, offset + i - 2);
      if (bytes.length === 2) pairRanks[(bytes.charCodeAt(0) << 8) | bytes.charCodeAt(1)] = offset + i - 2;
    }
  }
  table = t;
  return t;
}

/**
 * Builds the rank table now when it is not built yet: 100–300 ms of synchronous work that a process
 * serving requests does before it listens, not inside the first request that counts tokens.
 */
export function loadRanks(): void {
  ranks();
}

/** the pre-tokenizer: linear in V8 on any input (no nested quantifier backtracks over a run more than once) */
const PIECES = new RegExp(cl100k.pat_str, 'gu');

/** calls `fn` with each piece of the text (as the regex cuts it) and its start index in the text */
export function forEachPiece(text: string, fn: (piece: string, start: number) => boolean | void): void {
  const re = new RegExp(PIECES);
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (fn(m[0], m.index) === false) return;
  }
}

export function pieceBytes(piece: string): ByteString {
  for (let i = 0; i < piece.length; i++) if (piece.charCodeAt(i) >= 0x80) return Buffer.from(piece, 'utf8').toString('latin1');
  return piece; // ASCII: its UTF-8 bytes are its char codes
}

/** scratch arrays of the merge, reused (one thread, no re-entry), grown to the longest piece seen */
let next = new Int32Array(256);
let prev = new Int32Array(256);
let dead = new Uint8Array(256);
const heap = new MinHeapOf(512);

/**
 * The start offsets (in bytes) of the tokens BPE cuts a piece into, the first one 0. A min-heap of
 * (rank, start) over the adjacent pairs, entries checked when taken (a pair whose parts changed since
 * it was pushed has another byte range, so another rank or none): the order of merges is exactly the
 * rescanning one's.
 */
export function tokenStarts(bytes: ByteString): number[] {
  const m = bytes.length;
  if (m <= 1) return m === 0 ? [] : [0];
  const r = ranks();
  if (r.has(bytes)) return [0];
  if (next.length < m) {
    next = new Int32Array(m * 2);
    prev = new Int32Array(m * 2);
    dead = new Uint8Array(m * 2);
  }
  heap.clear();
  for (let i = 0; i < m; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    dead[i] = 0;
  }
  const push = (start: number, end: number): void => {
    const rank = r.get(bytes.slice(start, end));
    if (rank !== undefined) heap.push(rank * POS + start);
  };
  for (let i = 0; i + 1 < m; i++) {
    const rank = pairRanks[(bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1)]!;
    if (rank >= 0) heap.push(rank * POS + i);
  }
  while (heap.size > 0) {
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
  const starts: number[] = [];
  for (let i = 0; i < m; i = next[i]!) starts.push(i);
  return starts;
}

/**
 * Positions in keys: 2^20, so a piece of up to a million bytes keeps exact keys (rank < 2^17, so a key
 * stays below 2^37, far inside a double's 2^53).
 */
const POS = 2 ** 20;
/** the longest piece whose tokens are found exactly (POS): a longer one is counted one token per byte */
export const MAX_PIECE_BYTES = POS;

/** tokens of one piece */
export function pieceTokens(piece: string): number {
  const bytes = pieceBytes(piece);
  if (bytes.length >= MAX_PIECE_BYTES) return bytes.length; // beyond exact keys (a piece of a million bytes cannot pass the API): at most one token per byte
  return tokenStarts(bytes).length;
}
