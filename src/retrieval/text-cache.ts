/**
 * What ranking derives from a memory's text (its stems, where its words stand, the period it dates
 * itself into…), kept by text. The same memories come back pass after pass, and several steps of one
 * pass read the same text: a long turn (an assistant's reply, a pasted document: 32,000 characters or
 * more) was scanned whole by each of them, every pass, which made a pass cost the length of the texts
 * it touched rather than the number of matches it ranked. Each fact is computed once per text, on first
 * use, and the text is kept once for all of them.
 */

/** texts kept */
export const TEXT_CACHE_TEXTS = 20_000;
/**
 * What is kept, in characters: each text's length plus what its facts report of themselves (a word
 * index holds two offsets a word). ~40 MB of strings at most, whatever is stored.
 */
export const TEXT_CACHE_CHARS = 20_000_000;

/** one kind of fact about a text, its name the key it is kept under */
export interface TextFact<T> {
  readonly name: string;
  readonly compute: (text: string) => T;
  /** what the fact holds, in characters' worth (see TEXT_CACHE_CHARS); nothing beyond the text when absent */
  readonly size?: (value: T) => number;
}

const facts = new Map<string, Map<string, unknown>>();
let kept = 0;
/**
 * The text looked up last, and its facts: the steps of a pass ask about one candidate one after the
 * other, and comparing the very same string is free where finding a long one again in the map is not
 * (a text read afresh from the store is compared character by character with the one kept).
 */
let lastText: string | null = null;
let lastKnown: Map<string, unknown> | undefined;

/** The fact about the text, computed on first use. Shared: never modify the result. */
export function factOf<T>(text: string, fact: TextFact<T>): T {
  let known = text === lastText ? lastKnown : facts.get(text);
  lastText = text;
  lastKnown = known;
  if (known?.has(fact.name)) return known.get(fact.name) as T;
  const value = fact.compute(text);
  // a fact may be computed from another of the same text's, kept meanwhile
  known = facts.get(text);
  const extra = fact.size?.(value) ?? 0;
  if (text.length + extra > TEXT_CACHE_CHARS) return value;
  // all at once: what comes back pass after pass is back after the next pass's first use
  if ((!known && facts.size >= TEXT_CACHE_TEXTS) || kept + (known ? 0 : text.length) + extra > TEXT_CACHE_CHARS) {
    facts.clear();
    kept = 0;
    known = undefined;
  }
  if (!known) {
    known = new Map();
    facts.set(text, known);
    kept += text.length;
  }
  kept += extra;
  known.set(fact.name, value);
  lastText = text;
  lastKnown = known;
  return value;
}

/** how many texts are kept, and their characters with what their facts report (tests read it) */
export function textCacheSize(): { texts: number; chars: number } {
  return { texts: facts.size, chars: kept };
}
