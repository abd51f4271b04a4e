import { factOf, type TextFact } from './text-cache.js';
import { sharedWord } from './word-ids.js';

/**
 * Words that carry no retrieval signal. Dropping them keeps FTS queries fast (a term present in most
 * rows makes bm25() score nearly the whole table) and keeps lexical overlap meaningful.
 */
export const STOPWORDS = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being below
  between both but by can could did didn't do does doesn't doing don't down during each few for from
  further had has have having he he'd he'll he's her here here's hers herself him himself his how how's i
  i'd i'll i'm i've if in into is isn't it it's its itself let's me more most my myself no nor not of off
  on once only or other ought our ours ourselves out over own same she she'd she'll she's should so some
  such than that that's the their theirs them themselves then there there's these they they'd they'll
  they're they've this those through to too under until up very was wasn't we we'd we'll we're we've were
  what what's when when's where where's which while who who's whom why why's with would you you'd you'll
  you're you've your yours yourself yourselves tell know remember remind recall please just also really did say said
  thing things anything something get gets got getting now recently lately`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * Words that frame a question rather than say what it is about ("what KIND of art", "how MANY TIMES",
 * "what HAPPENED to"): in a question they match the wrong turns ("your kind words"), so the retrieval
 * pass leaves them out of what it searches. Not stopwords: in a statement they carry meaning.
 */
export const QUESTION_FRAME = new Set(
  `kind kinds type types sort sorts many much times often ever way ways likely might happen happened happening`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * How people say that a state changed, by the word a question about that state uses: "where do I
 * live?" is answered by "we moved to Bristol", which shares no word with it; "where do I work?" by
 * "I got hired at Acme". A question about the state also searches these words, and a statement using
 * one counts as being on the same subject as one using the state word (supersession). Keyed by stem.
 */
const CHANGE_EVENTS: ReadonlyMap<string, readonly string[]> = new Map(
  (
    [
      [['live', 'home', 'address'], ['moved', 'relocated']],
      [['work', 'job', 'employer'], ['hired', 'joined', 'promoted', 'quit']],
    ] as const
  ).flatMap(([states, events]) => states.map((w) => [stem(w), events] as const)),
);

/** The change words (CHANGE_EVENTS) of the query's terms, those not already among them. */
export function changeTerms(terms: readonly string[]): string[] {
  const have = new Set(terms);
  const out = new Set<string>();
  for (const t of terms) for (const e of CHANGE_EVENTS.get(stem(t)) ?? []) if (!have.has(e)) out.add(e);
  return [...out];
}

/** Whether two sets of stems name one subject: a shared stem, or a state and one of its change words. */
export function sameSubject(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) {
    if (b.has(x)) return true;
    for (const e of CHANGE_EVENTS.get(x) ?? []) if (b.has(stem(e))) return true;
  }
  for (const x of b) for (const e of CHANGE_EVENTS.get(x) ?? []) if (a.has(stem(e))) return true;
  return false;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'_-]*/gu;

/** Lower-cased words of a text, stopwords kept (for embeddings and overlap). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/'s$/, ''));
}

/** The words of a text where they stand in it (offsets into the text), each as `words` gives it. */
export function* wordsAt(text: string): Generator<{ word: string; at: number; end: number }> {
  for (const m of text.matchAll(WORD)) yield { word: m[0].toLowerCase().replace(/'s$/, ''), at: m.index, end: m.index + m[0].length };
}

/** Whether a word as `words` gives it says what a text is about: not a stopword, not one character. */
export function isContentWord(word: string): boolean {
  return word.length >= 2 && !STOPWORDS.has(word);
}

/** The stem `stems` keeps of a word as `words` gives it; null for a stopword or a one-character word. */
export function contentStem(word: string): string | null {
  return isContentWord(word) ? stem(word) : null;
}

/** BM25's inverse document frequency of a word `df` of `n` documents hold (both stores, and feedback's weights). */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/**
 * The most words of a query searched: a chat message used as the query (RealMem: p50 19 content
 * words, p90 45) is searched by its first 32. Each word is one more posting list to score; past 32
 * the gain is small (BM25 alone on RealMem dev: 16 words 0.558 session R@8, 32 words 0.596, all 0.604).
 */
export const MAX_QUERY_TERMS = 32;

/** A word held by this many of a user's entries or more is common for that user whatever the share (a cap on a big user's search cost). */
export const COMMON_TERM_DOCS = 2000;

/**
 * The entries a content word must be held by to be common for a user of `userDocs` entries: 15% of
 * them (at least 10, at most COMMON_TERM_DOCS). Such a word ("time", "like", "help": 10-40% of each
 * RealMem persona's entries) says little of what an entry is about, and searching it reads most of the
 * user's matches: RealMem dev, words above 10% of the user's entries are 31% of a query's words and
 * 69% of the rows its search reads. Left out while a rarer word has matches: `npm run eval -- --all`
 * LoCoMo 0.754 -> 0.758, RealMem 0.648 -> 0.653 (docs/evaluation.md, with the shares tried).
 */
export function commonFrom(userDocs: number): number {
  return Math.min(COMMON_TERM_DOCS, Math.max(10, Math.ceil(0.15 * userDocs)));
}

/**
 * The terms a search scores: every content term held by `common` entries or more is left out while a
 * term with matches remains; a speaker's name (`isName`) is never left out, since how often a person
 * speaks says nothing of what they said. All of them when nothing else matches.
 */
export function withoutCommon<T>(terms: readonly T[], docsOf: (t: T) => number, isName: (t: T) => boolean, common: number): T[] {
  const kept = terms.filter((t) => isName(t) || docsOf(t) < common);
  return kept.some((t) => docsOf(t) > 0) ? kept : [...terms];
}

/** words whose full stop does not end a sentence ("Dr. Seuss", "vs. last year") */
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'jr', 'sr', 'vs', 'etc', 'approx']);

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * How many sentences a text holds: runs that hold a letter or a digit and end in ".", "!" or "?" (or
 * at the end of the text). A full stop inside a word ("3.5", "U.S.", "e.g."), after a single letter
 * ("J. Smith") or after a title ("Dr. Seuss") ends none. One pass, no regular expression that could
 * backtrack.
 */
export function sentenceCount(text: string): number {
  let count = 0;
  let word = '';
  let spoken = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i] ?? '';
    const next = text[i + 1] ?? '';
    if (LETTER_OR_DIGIT.test(c) || (c === '.' && word !== '' && LETTER_OR_DIGIT.test(next))) {
      spoken ||= c !== '.';
      word += c.toLowerCase();
      continue;
    }
    const stop = c === '.' && word.length > 1 && !word.includes('.') && !ABBREVIATIONS.has(word);
    if (spoken && (c === '!' || c === '?' || stop || c === '')) {
      count++;
      spoken = false;
    }
    word = '';
  }
  return count;
}

/** The distinct content words of a query, at most `max`, in first-seen order. */
export function queryTerms(text: string, max = MAX_QUERY_TERMS): string[] {
  const seen = new Set<string>();
  for (const w of words(text)) {
    if (!isContentWord(w)) continue;
    seen.add(w);
    if (seen.size >= max) break;
  }
  return [...seen];
}

/**
 * The words ListOptions.expansion adds to a search, each read as `queryTerms` reads a query (its first
 * content word), with the weights of every entry giving it summed, in the order first given.
 */
export function expansionTerms(expansion: ReadonlyArray<{ word: string; weight: number }>): Map<string, number> {
  const added = new Map<string, number>();
  for (const { word, weight } of expansion) for (const w of queryTerms(word, 1)) added.set(w, (added.get(w) ?? 0) + weight);
  return added;
}

/**
 * A light suffix-stripping stem ("reading", "reads" → "read"; "lives", "living", "live" → "liv"), so
 * that inflections of one word compare equal when ranking compares texts. Not a full stemmer.
 */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '');
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  for (const suffix of ['ing', 'ed', 'es', 's', 'ly']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/**
 * Kept by text (text-cache.ts): ranking asks for the same memory's stems several times a pass, and the
 * same memories come back pass after pass. Long texts are kept too: stemming an assistant's reply of
 * thousands of characters again cost more than the rest of its ranking (RealMem: ~15 ms of a 33 ms retrieve).
 */
const STEMS: TextFact<readonly string[]> = {
  name: 'stems',
  compute: (text) => {
    const out = new Set<string>();
    for (const w of words(text)) {
      const s = contentStem(w);
      if (s !== null) out.add(sharedWord(s));
    }
    return [...out];
  },
};

/** The distinct stems of a text's content words (stopwords dropped). Shared: never modify the result. */
export function stems(text: string): readonly string[] {
  return factOf(text, STEMS);
}

/** the same stems as a set, kept beside them (no second scan of the text) */
const STEM_SET: TextFact<ReadonlySet<string>> = { name: 'stem set', compute: (text) => new Set(stems(text)), size: (set) => set.size };

/**
 * How many of the given stems the text holds: the cost of the question's words, not of the text's
 * (a long turn holds thousands of distinct stems, a query a few dozen).
 */
export function heldStems(text: string, wanted: Iterable<string>): string[] {
  const have = factOf(text, STEM_SET);
  const out: string[] = [];
  for (const w of wanted) if (have.has(w)) out.push(w);
  return out;
}

/**
 * Whether the text holds at least `n` distinct content words, read only as far as it takes and kept
 * nowhere: for a text derived once (asksOnly's, the turn without its questions), not a stored one.
 */
export function holdsStems(text: string, n: number): boolean {
  if (n <= 0) return true;
  const seen = new Set<string>();
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const s = contentStem(m[0].replace(/'s$/, ''));
    if (s !== null && seen.add(s).size >= n) return true;
  }
  return false;
}

/**
 * An FTS5 MATCH expression that ORs the query's content words, each as a quoted string so that user
 * text can never be read as FTS syntax (NEAR, OR, *, -, quotes), each word as `indexed` gives it (as an
 * index holds it: the SQLite store's prefixes its owner's). Empty when nothing is left.
 */
export function ftsMatchExpression(text: string, max?: number, indexed: (word: string) => string = (w) => w): string {
  return queryTerms(text, max)
    .map((t) => `"${indexed(t).replace(/"/g, '""')}"`)
    .join(' OR ');
}
