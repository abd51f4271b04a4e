import type { Passage } from '../domain/entry.js';
import { passagesOf } from '../embedding/passages.js';
import { contentStem, wordsAt } from './query-terms.js';
import { factOf, type TextFact } from './text-cache.js';
import { sharedWord } from './word-ids.js';

/** a turn longer than this is reported with the passage that matched, and quoted by it */
export const LONG_TURN_CHARS = 1_000;
/** the longest passage quoted of a long turn (about 120 tokens of English) */
export const PASSAGE_CHARS = 600;

/** what matchedPassage has read of texts to index their words, in characters (tests count work with it) */
export const passageWork = { chars: 0 };

/**
 * where each content word of a text stands: stem `i` (slots) at places[starts[i]] to places[starts[i + 1]],
 * each a start and an end offset, in text order (flat arrays: an array per stem of every long turn kept
 * was an object per stem for the garbage collector to visit)
 */
interface WordIndex {
  slots: ReadonlyMap<string, number>;
  starts: Int32Array;
  places: Int32Array;
}

/**
 * Read once per text (text-cache.ts): a long turn comes back pass after pass with other queries, and
 * what a query needs of it is where its own words stand, not another scan of the whole text.
 */
const WORD_INDEX: TextFact<WordIndex> = {
  name: 'word index',
  compute: (text) => {
    passageWork.chars += text.length;
    const found = new Map<string, number[]>();
    let offsets = 0;
    for (const { word, at, end } of wordsAt(text)) {
      const s = contentStem(word);
      if (s === null) continue;
      const p = found.get(s);
      if (p) p.push(at, end);
      else found.set(s, [at, end]);
      offsets += 2;
    }
    const slots = new Map<string, number>();
    const starts = new Int32Array(found.size + 1);
    const places = new Int32Array(offsets);
    let i = 0;
    for (const [s, p] of found) {
      slots.set(sharedWord(s), i);
      places.set(p, starts[i]!);
      starts[i + 1] = starts[i]! + p.length;
      i++;
    }
    return { slots, starts, places };
  },
  size: (index) => index.places.length,
};

/**
 * The part of a long turn that matched the query: the PASSAGE_CHARS-long window holding the most
 * distinct query words (then the most occurrences), widened to whole words. A turn of any length is
 * searched whole (full-text search reads every word of it); this says which part of it a reader needs.
 * The turn's words are indexed once (WORD_INDEX); a query then costs its matches: one pass over them.
 * Null for a turn that is not long, and for one where no query word occurs (the window would be
 * arbitrary): the turn's start is quoted.
 */
export function matchedPassage(content: string, queryStems: ReadonlySet<string>): Passage | null {
  if (content.length <= LONG_TURN_CHARS || queryStems.size === 0) return null;
  const { slots, starts, places } = factOf(content, WORD_INDEX);
  const hits: Array<{ at: number; end: number; stem: string }> = [];
  for (const stem of queryStems) {
    const i = slots.get(stem);
    if (i === undefined) continue;
    for (let k = starts[i]!; k < starts[i + 1]!; k += 2) hits.push({ at: places[k]!, end: places[k + 1]!, stem });
  }
  if (hits.length === 0) return null;
  // in text order, as a scan finds them: words never overlap, so their starts differ
  hits.sort((a, b) => a.at - b.at);
  // two pointers over the matches: every window starting at a match and ending within PASSAGE_CHARS
  const inWindow = new Map<string, number>();
  let best = { from: 0, to: 0, distinct: 0, count: 0 };
  for (let i = 0, j = 0; i < hits.length; i++) {
    for (; j < hits.length && hits[j]!.end - hits[i]!.at <= PASSAGE_CHARS; j++) inWindow.set(hits[j]!.stem, (inWindow.get(hits[j]!.stem) ?? 0) + 1);
    const count = j - i;
    if (inWindow.size > best.distinct || (inWindow.size === best.distinct && count > best.count)) best = { from: i, to: j - 1, distinct: inWindow.size, count };
    const s = hits[i]!.stem;
    const n = inWindow.get(s)! - 1;
    if (n === 0) inWindow.delete(s);
    else inWindow.set(s, n);
  }
  // centre the matched span in the window, then widen it to whole words
  const spanStart = hits[best.from]!.at;
  const spanEnd = hits[best.to]!.end;
  const slack = Math.max(0, PASSAGE_CHARS - (spanEnd - spanStart));
  let start = Math.max(0, spanStart - Math.floor(slack / 2));
  let end = Math.min(content.length, start + PASSAGE_CHARS);
  start = Math.max(0, end - PASSAGE_CHARS);
  if (start > 0) start = Math.min(spanStart, wordStartAfter(content, start));
  if (end < content.length) end = Math.max(spanEnd, wordEndBefore(content, end));
  return { start, end, text: content.slice(start, end) };
}

/**
 * The display passage of a long turn whose `part`-th embedded passage (src/embedding/passages.ts) the
 * semantic tier matched: its start, cut to PASSAGE_CHARS between words. Null when the turn is not long
 * or has no such part (passages are recomputed from the text, which is the one they were embedded from).
 */
export function vectorPassage(content: string, part: number): Passage | null {
  if (content.length <= LONG_TURN_CHARS) return null;
  const p = passagesOf(content)[part - 1];
  if (!p) return null;
  const end = p.end - p.start <= PASSAGE_CHARS ? p.end : wordEndBefore(content, p.start + PASSAGE_CHARS);
  return { start: p.start, end, text: content.slice(p.start, end) };
}

/**
 * What a prompt block quotes of a memory: a turn of at most LONG_TURN_CHARS whole; a longer one by
 * its matched passage, or its first PASSAGE_CHARS when none matched, with "…" where text was left out.
 */
export function quoted(content: string, passage: Passage | undefined): string {
  if (content.length <= LONG_TURN_CHARS) return content;
  const { start, end } = passage ?? { start: 0, end: wordEndBefore(content, PASSAGE_CHARS) || PASSAGE_CHARS };
  return `${start > 0 ? '… ' : ''}${content.slice(start, end).trim()}${end < content.length ? ' …' : ''}`;
}

/** a cut moves at most this far to fall between words (a text without spaces is cut where it is) */
const WORD_REACH = 40;

function wordStartAfter(text: string, i: number): number {
  for (let j = i; j < Math.min(text.length, i + WORD_REACH); j++) if (/\s/.test(text[j - 1]!)) return j;
  return i;
}

function wordEndBefore(text: string, i: number): number {
  for (let j = i; j > Math.max(0, i - WORD_REACH); j--) if (/\s/.test(text[j]!)) return j;
  return i;
}
