import { createHash } from 'node:crypto';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import type { Turn } from '../domain/turn.js';

/**
 * Chat-completion framing per message (`<|im_start|>role … <|im_end|>`) and for priming the reply, as
 * OpenAI's cookbook counts them ("How to count tokens with tiktoken"); other models frame similarly.
 */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const TOKENS_REPLY_PRIMING = 3;

/** distinct texts whose counts are remembered; a session is re-estimated after every reply */
const CACHE_SIZE = 20_000;

let encoder: Tiktoken | null = null;

/**
 * The cl100k_base BPE, whose ranks ship inside js-tiktoken (no download, works offline). Building it
 * takes ~250 ms, so it happens once per process, on first use; it is immutable afterwards.
 */
function cl100kEncoder(): Tiktoken {
  encoder ??= new Tiktoken(cl100k);
  return encoder;
}

/**
 * Estimates tokens with a real BPE tokenizer. Local models tokenize differently (Llama's BPE is close
 * to cl100k on English; within ~10–15%), which the compaction threshold's margin absorbs — it is an
 * estimate for deciding when to compact, not a billing count.
 */
export class TokenCounter {
  private readonly cache = new Map<string, number>();

  /** tokens of a text; special-token markers in user text count as plain text, never throw */
  count(text: string): number {
    if (text.length === 0) return 0;
    // long texts are remembered by digest, so the cache stays a few megabytes whatever the turns hold
    const key = text.length <= 64 ? text : createHash('sha1').update(text).digest('base64');
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const n = cl100kEncoder().encode(text, [], []).length;
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, n);
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

  /** the longest prefix of `text` that fits in `maxTokens` (a summary's hard cap) */
  truncate(text: string, maxTokens: number): string {
    if (this.count(text) <= maxTokens) return text;
    const enc = cl100kEncoder();
    const ids = enc.encode(text, [], []);
    // a cut inside a multi-byte character decodes to U+FFFD: drop it
    return enc.decode(ids.slice(0, Math.max(0, maxTokens))).replace(/\uFFFD+$/, '');
  }
}
