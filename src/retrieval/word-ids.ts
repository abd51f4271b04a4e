/**
 * Words as small integers, so that what is tallied over many texts is tallied in typed arrays. A
 * message's relevance feedback (feedback.ts) sums ~1,200 words of its best sessions and counts how
 * many of its ~60 hits hold each: over string-keyed maps that was ~10% of a retrieve's CPU on real
 * text (docs/bench-report.md, round 37).
 *
 * Ids are given in order of first use. The table starts afresh, under a new generation, only when a
 * caller says its earlier ids may go (`settle`, at the start of a synchronous pass) and it holds more
 * than WORD_IDS words; what was derived under an older generation is then derived again. So the ids one
 * pass reads never change under it, and the table holds WORD_IDS words plus at most one pass's own.
 */

/** words kept before the table starts afresh (~100 bytes each with their strings) */
export const WORD_IDS = 200_000;

const ids = new Map<string, number>();
const names: string[] = [];
let generation = 0;

/** the word's id, given on first use */
export function wordId(word: string): number {
  let id = ids.get(word);
  if (id === undefined) {
    id = names.length;
    ids.set(word, id);
    names.push(word);
  }
  return id;
}

/** the word of an id of the current generation */
export function wordOf(id: number): string {
  return names[id]!;
}

/** how many ids the current generation has given (every id is below it) */
export function wordCount(): number {
  return names.length;
}

/**
 * The generation ids are given under from now until the next call: the table starts afresh first
 * when it holds more than `limit` words. Call where no id of an older generation is held but in what
 * is keyed by generation.
 */
export function settle(limit = WORD_IDS): number {
  if (names.length > limit) {
    ids.clear();
    names.length = 0;
    generation++;
  }
  return generation;
}

/** words kept by sharedWord before its table starts afresh */
export const SHARED_WORDS = 200_000;
const strings = new Map<string, string>();

/**
 * One string for every copy of a word. What is kept per text (its stems, where its words stand) held
 * its own copy of each word: ~5,000 real turns' facts held ~500,000 strings of a few thousand words,
 * each an object the garbage collector visits. Past SHARED_WORDS the table starts afresh: a copy is
 * still the word.
 */
export function sharedWord(word: string): string {
  const kept = strings.get(word);
  if (kept !== undefined) return kept;
  if (strings.size >= SHARED_WORDS) strings.clear();
  strings.set(word, word);
  return word;
}
