import { createHash } from 'node:crypto';
import type { Turn } from '../domain/turn.js';
import { MAX_PIECE_BYTES, forEachPiece, pieceBytes, tokenStarts } from './cl100k.js';

/**
 * Chat-completion framing per message (`<|im_start|>role … <|im_end|>`) and for priming the reply, as
 * OpenAI's cookbook counts them ("How to count tokens with tiktoken"); other models frame similarly.
 */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const TOKENS_REPLY_PRIMING = 3;

/** distinct texts whose counts are remembered; a session is re-estimated after every reply */
const CACHE_SIZE = 20_000;
/** distinct pieces (words with their leading space, mostly) whose counts are remembered */
const PIECE_CACHE_SIZE = 50_000;

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
  private readonly cache = new Map<string, number>();
  private readonly pieces = new Map<string, number>();
  private merged = 0;

  /** tokens of a text; special-token markers in user text count as plain text, never throw */
  count(text: string): number {
    if (text.length === 0) return 0;
    // long texts are remembered by digest, so the cache stays a few megabytes whatever the turns hold
    const key = text.length <= 64 ? text : digest(text);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let n = 0;
    forEachPiece(text, (piece) => {
      n += this.piece(piece);
    });
    this.remember(text, n, key);
    return n;
  }

  private remember(text: string, n: number, key = text.length <= 64 ? text : digest(text)): void {
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, n);
  }

  private piece(piece: string): number {
    const hit = this.pieces.get(piece);
    if (hit !== undefined) return hit;
    const bytes = pieceBytes(piece);
    // beyond exact heap keys (a piece of a million bytes cannot pass the API): at most one token per byte
    const n = bytes.length >= MAX_PIECE_BYTES ? bytes.length : this.starts(bytes).length;
    // short pieces recur (words); a long one is rarely seen twice and would pin its text in memory
    if (piece.length <= 64) {
      if (this.pieces.size >= PIECE_CACHE_SIZE) this.pieces.clear();
      this.pieces.set(piece, n);
    }
    return n;
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
   * piece: counting it and then cutting it merged it twice, four merges for a transcript of two such
   * turns in one turn of the event loop).
   */
  truncate(text: string, maxTokens: number): string {
    const known = this.cached(text);
    if (known !== undefined && known <= maxTokens) return text;
    let left = Math.max(0, maxTokens);
    let cut: string | null = null;
    forEachPiece(text, (piece, start) => {
      const short = piece.length <= 64;
      const n = short ? this.piece(piece) : -1;
      if (short && n <= left) {
        left -= n;
        return true;
      }
      const bytes = pieceBytes(piece);
      const starts = this.starts(bytes);
      if (!short && starts.length <= left) {
        left -= starts.length;
        return true;
      }
      // the piece's first `left` tokens, as decoding them would give
      const end = left < starts.length ? starts[left]! : bytes.length;
      cut = text.slice(0, start) + Buffer.from(bytes.slice(0, end), 'latin1').toString('utf8');
      return false;
    });
    // (the callback's assignment is invisible to the narrowing)
    const prefix = cut as string | null;
    if (prefix === null) {
      // walked whole: its count is known, and a later count or cut of it reads it back
      this.remember(text, Math.max(0, maxTokens) - left);
      return text;
    }
    // a cut inside a multi-byte character decodes to U+FFFD: drop it (a loop: `\uFFFD+$` retries a run
    // of them from each of its characters when the text goes on after it)
    let end = prefix.length;
    while (end > 0 && prefix.charCodeAt(end - 1) === 0xfffd) end--;
    return prefix.slice(0, end);
  }

  /** bytes of pieces this counter has run through the BPE merge (its work, whatever the clock says) */
  get mergedBytes(): number {
    return this.merged;
  }

  private starts(bytes: string): number[] {
    this.merged += bytes.length;
    return tokenStarts(bytes);
  }

  private cached(text: string): number | undefined {
    if (text.length === 0) return 0;
    return this.cache.get(text.length <= 64 ? text : digest(text));
  }
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}
