import type { TextHit } from '../ports/long-term.js';
import { bm25Idf, isContentWord, words } from './query-terms.js';
import { factOf, type TextFact } from './text-cache.js';
import { settle, wordCount, wordId, wordOf } from './word-ids.js';

/** the best sessions of a message's search whose words are searched next (feedbackWords) */
export const FEEDBACK_SESSIONS = 3;
/**
 * the most words searched next. RealMem dev session R@8: 20 words 0.702, 40 words 0.707 at +2 ms of
 * CPU a message (each added word is one more posting list read); without feedback 0.685
 */
export const FEEDBACK_WORDS = 20;
/** the share of the query the added words weigh together; the message's own words weigh the rest */
export const FEEDBACK_SHARE = 0.3;

/** a text's content words as ids (word-ids.ts) in the order they first occur, how often each does, and how many content words it holds */
interface WordCounts {
  ids: Int32Array;
  counts: Int32Array;
  total: number;
}

function countWords(text: string): WordCounts {
  const at = new Map<number, number>();
  const ids: number[] = [];
  const counts: number[] = [];
  let total = 0;
  for (const w of words(text)) {
    if (!isContentWord(w)) continue;
    const id = wordId(w);
    const i = at.get(id);
    if (i === undefined) {
      at.set(id, ids.length);
      ids.push(id);
      counts.push(1);
    } else counts[i]!++;
    total++;
  }
  return { ids: Int32Array.from(ids), counts: Int32Array.from(counts), total };
}

/** the word counts of the current generation of ids: a text's counts hold the ids they were taken under */
let counting: { generation: number; fact: TextFact<WordCounts> } | undefined;
function wordCounts(generation: number): TextFact<WordCounts> {
  if (counting?.generation !== generation) counting = { generation, fact: { name: `word counts ${generation}`, compute: countWords, size: (v) => 2 * v.ids.length } };
  return counting.fact;
}

/** Counts a hit's words as feedbackWords reads them, so that a pass may count those of texts nothing has read yet beforehand (retrieve.ts). */
export function readFeedbackFacts(content: string): void {
  factOf(content, wordCounts(settle()));
}

/** by word id, zero between passes: a word's share of the best sessions, and how many hits hold it */
let shares = new Float64Array(4096);
let holders = new Int32Array(4096);

/**
 * The words to search a message for once more, from what its search found (relevance feedback in
 * RM3's shape). The matched turns of its FEEDBACK_SESSIONS best sessions (by `session_bm25`) stand for
 * what the message refers back to: a word weighs by its share of those turns' words, by its
 * session's score against the best one's, and by how rare it is among all the hits (an idf over them:
 * a word every hit holds tells none of them apart). The FEEDBACK_WORDS heaviest (ties by word) weigh
 * FEEDBACK_SHARE of the query together, its `queryWords` words (1 each) the rest. A message names a plan
 * in its own words; the sessions about the plan share theirs. Nothing for hits without session scores.
 */
export function feedbackWords(hits: readonly TextHit[], queryWords: number): Array<{ word: string; weight: number }> {
  const bySession = new Map<string, { score: number; hits: TextHit[] }>();
  for (const h of hits) {
    const score = h.session_bm25 ?? 0;
    if (score <= 0) continue;
    const s = bySession.get(h.entry.session_id) ?? { score, hits: [] };
    s.hits.push(h);
    bySession.set(h.entry.session_id, s);
  }
  const best = [...bySession.values()].sort((a, b) => b.score - a.score).slice(0, FEEDBACK_SESSIONS);
  if (best.length === 0 || queryWords === 0) return [];
  const fact = wordCounts(settle());
  const counted = new Map(hits.map((h) => [h, factOf(h.entry.content, fact)]));
  if (shares.length < wordCount()) {
    const size = 2 ** Math.ceil(Math.log2(wordCount()));
    shares = new Float64Array(size);
    holders = new Int32Array(size);
  }
  // the best sessions' words, in the order first met
  const met: number[] = [];
  for (const s of best) {
    const total = s.hits.reduce((t, h) => t + counted.get(h)!.total, 0);
    if (total === 0) continue;
    const share = s.score / best[0]!.score / total;
    for (const h of s.hits) {
      const { ids, counts } = counted.get(h)!;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        if (shares[id] === 0) met.push(id);
        shares[id] = shares[id]! + share * counts[i]!;
      }
    }
  }
  for (const { ids } of counted.values()) {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (shares[id]! > 0) holders[id] = holders[id]! + 1;
    }
  }
  const top: Array<[string, number]> = [];
  const before = (a: [string, number], b: [string, number]) => a[1] > b[1] || (a[1] === b[1] && a[0] < b[0]);
  for (const id of met) {
    const weight = shares[id]! * bm25Idf(hits.length, holders[id]!);
    shares[id] = 0;
    holders[id] = 0;
    if (top.length === FEEDBACK_WORDS && weight < top[FEEDBACK_WORDS - 1]![1]) continue;
    const w: [string, number] = [wordOf(id), weight];
    let at = top.length;
    while (at > 0 && before(w, top[at - 1]!)) at--;
    if (at === FEEDBACK_WORDS) continue;
    top.splice(at, 0, w);
    if (top.length > FEEDBACK_WORDS) top.pop();
  }
  const sum = top.reduce((t, [, v]) => t + v, 0);
  if (sum <= 0) return [];
  const scale = (queryWords * FEEDBACK_SHARE) / (1 - FEEDBACK_SHARE) / sum;
  return top.map(([word, v]) => ({ word, weight: v * scale }));
}

/**
 * The best `limit` of a search's hits and of a second search for added words only, each hit scored by
 * the sum of its scores in both, its session likewise. BM25 is a sum over the query's words, so a hit
 * (or a session) both searches found scores as the whole expanded query would score it, and the
 * message's own words are not read twice; one only one search found keeps that search's part.
 */
export function withAddedWords(found: readonly TextHit[], added: readonly TextHit[], limit: number): TextHit[] {
  const sessions = new Map<string, number>();
  for (const list of [found, added]) {
    const seen = new Set<string>();
    for (const h of list) {
      if (h.session_bm25 === undefined || seen.has(h.entry.session_id)) continue;
      seen.add(h.entry.session_id);
      sessions.set(h.entry.session_id, (sessions.get(h.entry.session_id) ?? 0) + h.session_bm25);
    }
  }
  const out = new Map<string, TextHit>();
  for (const h of [...found, ...added]) {
    const known = out.get(h.entry.id);
    if (known) known.bm25 += h.bm25;
    else out.set(h.entry.id, { ...h, ...(sessions.has(h.entry.session_id) ? { session_bm25: sessions.get(h.entry.session_id)! } : {}) });
  }
  return [...out.values()].sort((a, b) => b.bm25 - a.bm25).slice(0, limit);
}
