import { createHash } from 'node:crypto';
import type { Turn } from '../domain/turn.js';
import { FifoMap } from '../fifo-map.js';
import { giveTurn, room as processRoom } from '../pace.js';
import { MAX_PIECE_BYTES, mergeWork, pieceBytes, piecesOf, ranksSoon, tokenStarts, tokenStartsInSlices } from './cl100k.js';

/**
 * Chat-completion framing per message (`<|im_start|>role … <|im_end|>`) and for priming the reply, as
 * OpenAI's cookbook counts them ("How to count tokens with tiktoken"); other models frame similarly.
 */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const TOKENS_REPLY_PRIMING = 3;

/** distinct texts whose counts are remembered; a session is re-estimated after every reply */
const CACHE_SIZE = 20_000;
/** characters of long texts whose counts are remembered by the text itself too (TokenCounter.recent) */
const RECENT_CHARS = 2_000_000;
/** distinct pieces (words with their leading space, mostly) whose counts are remembered */
const PIECE_CACHE_SIZE = 50_000;
/**
 * Merging work (pairs taken off a heap, ~0.5 µs each: 2–4 ms) countSoon and truncateSoon do in one turn
 * of the event loop. One 32,000-character run is one piece of ~100,000 pops: merged whole it held
 * the loop 15–30 ms, and a /chat counted its message, its reply and each again to cut a transcript.
 */
export const POPS_PER_TURN = 8_192;
/** a long piece's merge stops this often to see whether the turn's work is done */
const SLICE_POPS = 512;
/** known pieces countSoon adds up between two looks at the turn's work */
const KNOWN_PIECES_PER_CHECK = 256;

/**
 * Counts tokens with a real BPE tokenizer: cl100k_base, whose ranks ship inside js-tiktoken (no
 * download, works offline; the table is built once per process, on first use). The count is exactly
 * js-tiktoken's `encode(text, [], []).length`, computed in O(n log n) on any text (`cl100k.ts`): a
 * 32,000-character message of any content counts in milliseconds, so no request or job stalls on it
 * (docs/architecture.md, token counting). Local models tokenize differently (Llama's BPE is close to
 * cl100k on English; within ~10–15%), which the compaction threshold's margin absorbs — it is an
 * estimate for deciding when to compact, not a billing count.
 */
export class TokenCounter {
  /** counts by the text, or by its digest when long, so the cache stays a few megabytes whatever the turns hold */
  private readonly cache = new FifoMap<string, number>();
  /**
   * The long texts counted lately, by the text itself, up to RECENT_CHARS: V8 keeps a string's hash,
   * so a text seen again costs no pass over it, where its digest reads it whole each time. A compaction
   * sums one session several times (its history, the turns it keeps, what it summarizes): over 30 turns
   * of 32,000 characters that was 10–13 ms of SHA-1 in one turn of the event loop.
   */
  private readonly recent = new FifoMap<string, number>();
  private recentChars = 0;
  private readonly pieces = new Map<string, number>();

  /** tokens of a text; special-token markers in user text count as plain text, never throw */
  count(text: string): number {
    const known = this.cached(text);
    if (typeof known === 'number') return known;
    let n = 0;
    for (const [piece] of piecesOf(text)) n += this.piece(piece);
    this.remember(text, n, known.key);
    return n;
  }

  /**
   * `count`, without holding the event loop: the work is cut into turns of at most POPS_PER_TURN (a
   * long piece's merge goes on where it stopped), and a rank table not built yet is built the same way
   * (ranksSoon). The count is remembered, so a `count` of the same text afterwards is a lookup: a
   * caller that must count synchronously asks this first.
   */
  async countSoon(text: string): Promise<number> {
    const known = this.cached(text);
    if (typeof known === 'number') return known;
    await ranksSoon();
    let n = 0;
    let walked = 0;
    for (const [piece] of piecesOf(text)) {
      const hit = this.pieces.get(piece);
      if (hit !== undefined) {
        n += hit;
        // the walk over known pieces is work too (a 32,000-character reply: ~6,000 of them)
        if (++walked % KNOWN_PIECES_PER_CHECK === 0) await room();
        continue;
      }
      await room();
      n += await soon(this.merged(piece, true));
    }
    this.remember(text, n, known.key);
    return n;
  }

  /** files a count under the key `cached` gave for the text */
  private remember(text: string, n: number, key: string): void {
    if (this.cache.size >= CACHE_SIZE) this.cache.shift();
    this.cache.set(key, n);
    if (key !== text) this.rememberRecent(text, n);
  }

  private rememberRecent(text: string, n: number): void {
    if (text.length > RECENT_CHARS || this.recent.has(text)) return;
    while (this.recentChars + text.length > RECENT_CHARS && this.recent.size > 0) this.recentChars -= this.recent.shift()![0].length;
    this.recent.set(text, n);
    this.recentChars += text.length;
  }

  private piece(piece: string): number {
    return this.pieces.get(piece) ?? done(this.merged(piece, false));
  }

  /** a piece's tokens, merged whole or (`sliced`) yielding between slices of the merge; remembered when short */
  private *merged(piece: string, sliced: boolean): Generator<void, number, void> {
    const bytes = pieceBytes(piece);
    // beyond exact heap keys (a piece of a million bytes cannot pass the API): at most one token per byte
    const n = bytes.length >= MAX_PIECE_BYTES ? bytes.length : (sliced ? yield* tokenStartsInSlices(bytes, SLICE_POPS) : tokenStarts(bytes)).length;
    if (piece.length <= 64) this.rememberPiece(piece, n);
    return n;
  }

  private rememberPiece(piece: string, n: number): void {
    // short pieces recur (words); a long one is rarely seen twice and would pin its text in memory
    if (this.pieces.size >= PIECE_CACHE_SIZE) this.pieces.clear();
    this.pieces.set(piece, n);
  }

  /** one message as a chat-completion call carries it */
  message(content: string, name?: string | null): number {
    return TOKENS_PER_MESSAGE + this.count(content) + (name ? TOKENS_PER_NAME + this.count(name) : 0);
  }

  turn(turn: Pick<Turn, 'content' | 'name'>): number {
    return this.message(turn.content, turn.name);
  }

  /** a session's history as the chat pipeline sends it: every turn plus the reply priming */
  session(turns: ReadonlyArray<Pick<Turn, 'content' | 'name'>>): number {
    let n = TOKENS_REPLY_PRIMING;
    for (const t of turns) n += this.turn(t);
    return n;
  }

  /**
   * `session`, each text counted a slice of the event loop at a time (countSoon): a session holds turns
   * of up to 32,000 characters, and the counts are remembered, so `session` and `turn` of the same turns
   * afterwards are lookups.
   */
  async sessionSoon(turns: ReadonlyArray<Pick<Turn, 'content' | 'name'>>): Promise<number> {
    for (const t of turns) {
      await this.countSoon(t.content);
      if (t.name) await this.countSoon(t.name);
    }
    return this.session(turns);
  }

  /**
   * An upper bound of `session(turns)` that tokenizes nothing: every BPE token covers at least one
   * byte of UTF-8, so a text has at most as many tokens as bytes. A session under a limit by this bound
   * is under it by `session` too, and the check after each reply (AutoCompactor) skips the tokenizer.
   */
  sessionAtMost(turns: ReadonlyArray<Pick<Turn, 'content' | 'name'>>): number {
    let n = TOKENS_REPLY_PRIMING;
    for (const t of turns) n += TOKENS_PER_MESSAGE + Buffer.byteLength(t.content, 'utf8') + (t.name ? TOKENS_PER_NAME + Buffer.byteLength(t.name, 'utf8') : 0);
    return n;
  }

  /**
   * The longest prefix of `text` that fits in `maxTokens` (a summary's hard cap, a turn's share of a
   * transcript). One walk over the pieces that stops at the first that does not fit: a text is never
   * counted whole first, and the piece the cut falls in is merged once (a 32,000-character run is one
   * piece: counting it and then cutting it merged it three times).
   */
  truncate(text: string, maxTokens: number): string {
    return done(this.cut(text, maxTokens, false));
  }

  /** `truncate`, its work cut into turns of the event loop as `countSoon`'s */
  async truncateSoon(text: string, maxTokens: number): Promise<string> {
    await ranksSoon();
    return soon(this.cut(text, maxTokens, true));
  }

  /**
   * The walk of `truncate` and `truncateSoon`: it yields where the async caller may give the event loop
   * a turn; `sliced` merges a long piece in slices, yielding between them.
   */
  private *cut(text: string, maxTokens: number, sliced: boolean): Generator<void, string, void> {
    const known = this.cached(text);
    if (typeof known === 'number' && known <= maxTokens) return text;
    let left = Math.max(0, maxTokens);
    for (const [piece, start] of piecesOf(text)) {
      const short = piece.length <= 64;
      if (short) {
        if (!this.pieces.has(piece)) yield;
        const n = this.piece(piece);
        if (n <= left) {
          left -= n;
          continue;
        }
      }
      yield;
      const bytes = pieceBytes(piece);
      const starts = sliced ? yield* tokenStartsInSlices(bytes, SLICE_POPS) : tokenStarts(bytes);
      if (!short && starts.length <= left) {
        left -= starts.length;
        continue;
      }
      return cutAt(text, start, bytes, starts, left);
    }
    // walked whole: its count is known, and a later count or cut of it reads it back (a count known
    // already was under maxTokens and returned above)
    if (typeof known !== 'number') this.remember(text, Math.max(0, maxTokens) - left, known.key);
    return text;
  }


  /**
   * A text's count when known; else the key to `remember` it under (the text when short, else its
   * digest), so that a text counted for the first time is digested once.
   */
  private cached(text: string): number | { key: string } {
    if (text.length === 0) return 0;
    if (text.length <= 64) return this.cache.get(text) ?? { key: text };
    const recent = this.recent.get(text);
    if (recent !== undefined) return recent;
    const key = digest(text);
    const n = this.cache.get(key);
    if (n === undefined) return { key };
    this.rememberRecent(text, n);
    return n;
  }
}

/** mergeWork() when countSoon or truncateSoon last gave the event loop a turn */
let yieldedAt = 0;

/**
 * Where countSoon and truncateSoon give the event loop a turn: before more merging once POPS_PER_TURN
 * were done since the last one, whichever call (or a synchronous count) did it, so calls in a row
 * share the budget of the turn they run in; and once the process's slice of work is spent
 * (src/pace.ts), which the jobs counting beside it (compaction, archival) spend too.
 */
async function room(): Promise<void> {
  if (mergeWork() - yieldedAt < POPS_PER_TURN) return processRoom();
  await giveTurn();
  yieldedAt = mergeWork();
}

/** a walk run to its end in this turn of the event loop */
function done<T>(walk: Generator<void, T, void>): T {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
  }
}

/** a walk run to its end, the event loop given a turn where it yields once this turn's work is done (room) */
async function soon<T>(walk: Generator<void, T, void>): Promise<T> {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
    await room();
  }
}

/** the text up to the piece at `start`, then that piece's first `left` tokens, as decoding them would give */
function cutAt(text: string, start: number, bytes: string, starts: readonly number[], left: number): string {
  const end = left < starts.length ? starts[left]! : bytes.length;
  const cut = text.slice(0, start) + Buffer.from(bytes.slice(0, end), 'latin1').toString('utf8');
  // a cut inside a multi-byte character decodes to U+FFFD: drop it (a loop: `\uFFFD+$` retries a run
  // of them from each of its characters when the text goes on after it)
  let keep = cut.length;
  while (keep > 0 && cut.charCodeAt(keep - 1) === 0xfffd) keep--;
  return cut.slice(0, keep);
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}
