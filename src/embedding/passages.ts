import type { VectorPayload, VectorPoint } from '../ports/vector-index.js';

/**
 * The passages a long turn is embedded as, besides its whole text (docs/retrieval.md, long turns).
 *
 * One constant for every embedder: 100 words is ~130–150 word pieces of English, inside MiniLM's
 * window of 256 (the hash embedder reads any length), and it is the size measured best on RealMem's
 * vector list (docs/evaluation.md, long turns: 100 words every 50 > 150 or 200 words).
 */
export const PASSAGE_WORDS = 100;
/** passages start every this many words: each word is in two passages, so a phrase is never cut by all of them */
export const PASSAGE_STEP = 50;
/** a turn of more words than this (1.5 passages) gets passages; a shorter one is read whole by any embedder */
export const PASSAGE_MIN_WORDS = Math.floor(PASSAGE_WORDS * 1.5);
/**
 * At most this many passages a turn, so embedding a turn costs at most 1 + 64 texts of ≤ 100 words:
 * a 30,000-character reply (~5,000 words) gets 64 passages, their starts spread evenly over it
 * (every ~78 words, so still overlapping); only a turn of more than 6,400 words leaves gaps between
 * passages (max_turn_chars, 32,000 by default, holds that many only of 4-letter words).
 */
export const MAX_PASSAGES = 64;

/** A passage of a turn: `text = content.slice(start, end)`; `part` counts from 1 (0 is the whole turn). */
export interface TextPassage {
  part: number;
  start: number;
  end: number;
  text: string;
}

/**
 * The overlapping passages of `content` to embed besides the whole turn: none for a turn of at most
 * PASSAGE_MIN_WORDS words; otherwise PASSAGE_WORDS-word windows every PASSAGE_STEP words (the last one
 * ending at the turn's last word), at most MAX_PASSAGES of them, spread evenly when capped.
 */
export function passagesOf(content: string): TextPassage[] {
  const starts: number[] = [];
  const ends: number[] = [];
  for (const m of content.matchAll(/\S+/g)) {
    starts.push(m.index);
    ends.push(m.index + m[0].length);
  }
  const n = starts.length;
  if (n <= PASSAGE_MIN_WORDS) return [];
  const last = n - PASSAGE_WORDS;
  const wanted = Math.ceil(last / PASSAGE_STEP) + 1;
  const count = Math.min(wanted, MAX_PASSAGES);
  const out: TextPassage[] = [];
  for (let i = 0; i < count; i++) {
    const first = count === wanted ? Math.min(i * PASSAGE_STEP, last) : Math.round((i * last) / (count - 1));
    const start = starts[first]!;
    const end = ends[first + PASSAGE_WORDS - 1]!;
    out.push({ part: i + 1, start, end, text: content.slice(start, end) });
  }
  return out;
}

/** What is embedded of an entry: its whole text (part 0), then each passage (part n at index n). */
export function textsToEmbed(content: string): string[] {
  return [content, ...passagesOf(content).map((p) => p.text)];
}

/** The points of an entry from the vectors of `textsToEmbed(payload.content)`, in that order. */
export function entryPoints(id: string, payload: VectorPayload, vectors: readonly Float32Array[]): VectorPoint[] {
  return vectors.map((vector, part) => ({ id, part, vector, payload }));
}
