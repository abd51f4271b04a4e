import { z } from 'zod';
import type { Explain, RetrievalResult, Tier } from '../domain/entry.js';
import { MemoryRecordSchema, VectorPayloadSchema } from '../domain/record.js';
import { isFiller } from '../domain/importance.js';
import { heldStems, holdsStems, sameSubject, stems, words } from './query-terms.js';
import { matchedPassage, vectorPassage } from './passage.js';
import { factOf, type TextFact } from './text-cache.js';
import { holdersOf, sameHolder } from './subject.js';
import { aboutPeriod, type TimeRange } from './time-range.js';

/** One memory as a tier found it, before fusion: a record with its kind (as a vector's payload has it). */
const CandidateSchema = VectorPayloadSchema.extend({
  id: MemoryRecordSchema.shape.id,
  importance: z.number().nullable(),
  similarity: z.number().optional(),
  /** which passage of a long turn the semantic tier matched (absent: its whole text) */
  part: z.number().int().positive().optional(),
  bm25: z.number().optional(),
  /** the BM25 of the memory's session read as one document (a message's text search gives it) */
  session_bm25: z.number().optional(),
});
export type Candidate = z.infer<typeof CandidateSchema>;

/** The ranked lists fusion reads: one per tier, and the long-term entries of the period a time question names. */
export type ListName = Tier | 'period' | 'overlap';
/** the lists the tiers give (overlap is derived from them) */
export type RankedLists = Partial<Record<Exclude<ListName, 'overlap'>, readonly Candidate[]>>;

/**
 * Reciprocal-rank-fusion constant. Small, not the usual 60 (which was made for merging many long web
 * result lists): here a few short lists are fused and a list's first places are what it is sure of.
 * With 5, two lists agreeing within their first six still beat one list's first place, and no list's
 * raw score scale (cosine, BM25) ever enters the sum. Measured on LoCoMo (README, retrieval quality):
 * 3–10 all do better than 60 on every conversation.
 */
export const RRF_K = 5;
/**
 * Every list votes equally; the period list is one more voice, not a filter, and `overlap` (the
 * candidates of every list ordered by how many of the query's words they hold) rewards a memory that
 * answers the whole question over one that repeats its rarest word.
 */
export const LIST_WEIGHTS: Record<ListName, number> = { short_term: 1, semantic: 1, long_term: 1, period: 1, overlap: 1 };
/**
 * A lexical embedder (`hash`) matches words, not meanings: its list repeats what BM25 already says,
 * less precisely (no word weights), so it counts half.
 */
export const LEXICAL_SEMANTIC_WEIGHT = 0.5;
export const TIER_PRIORITY: Record<Tier, number> = { short_term: 1, long_term: 0.5, semantic: 0.5 };
/**
 * Relevance dominates; the other parts order memories of about equal relevance. Their sum is 0.25,
 * so no prior can lift an irrelevant memory over one that two lists agree on.
 */
export const WEIGHTS = { relevance: 0.7, period: 0.2, tier_priority: 0.04, recency: 0.02, importance: 0.06 } as const;
export const RECENCY_HALF_LIFE_DAYS = 90;
/** a question's answer (or an answer's question) pulled in as context gets this share of its hit's relevance */
export const CONTEXT_SHARE = 0.9;
/**
 * A query that names a participant asks what that person said or did ("What has Melanie painted?"):
 * a memory another speaker said keeps this share of its relevance. Not zero: the other person
 * sometimes reports it ("Mel told me she quit").
 */
export const OTHER_SPEAKER_SHARE = 0.5;
/**
 * A turn that only asks something ("What pets do you have?") shares the query's words but answers
 * nothing: it keeps this share of its relevance (its answer, the next turn, is pulled in as context).
 */
export const QUESTION_SHARE = 0.7;
/** any other turn just before or after a hit, this share (it often holds the rest of what the hit tells) */
export const NEIGHBOUR_SHARE = 0.6;
/**
 * A turn of at most this many content words says one thing: its neighbours complete it (the retrieval
 * pass reads them as context) and a newer statement on its subject may replace it (supersession). A
 * longer one (an assistant's plan, a report) stands on its own: on RealMem dev, where assistant replies
 * run to hundreds of words, reading their neighbours cost 0.041 session R@8 and letting them supersede
 * each other 0.010, while on LoCoMo, whose turns are short, the bound changes nothing (+0.002).
 */
export const SHORT_TURN_WORDS = 30;

/**
 * Supersession only reorders near ties: an older statement is moved below a newer one on the same
 * subject when the newer scores at most this much less (with RRF_K 5: a rank or two lower in the
 * lists that hold both); a far weaker newer mention ("Meeting Priya for lunch") must not drag down a
 * strong older answer.
 */
export const SUPERSEDE_MARGIN = 0.2;

/**
 * A query of this many distinct content words or more is a message about a topic ("Regarding the
 * business processes we discussed last time, I've thought about it more…"), not a question about one
 * fact: no single turn is expected to hold all its words, the conversation it refers back to does.
 * For such a query a held word counts by its rarity among the candidates (wordWeight), and the
 * results spread over sessions (spreadOverSessions). Questions stay below it
 * (LoCoMo dev: 10 content words at p99) and chat messages mostly above (RealMem dev: 10 at p10, 19 at
 * the median).
 */
export const MESSAGE_WORDS = 12;

/**
 * A query of this many sentences or more is a message too, however short: a chat message sets the
 * scene and then asks ("Hi. I received the list of apartments. What should we do next for the
 * plan?"), a question asks one thing. RealMem dev: 575 of 581 query turns hold two sentences or more,
 * 95 of them fewer than MESSAGE_WORDS content words; LoCoMo dev: 1 question of 757.
 */
export const MESSAGE_SENTENCES = 2;

/** The query is a message about a topic, not a question about one fact (MESSAGE_WORDS, MESSAGE_SENTENCES). */
export function isMessage(o: Pick<RankOptions, 'queryWords' | 'querySentences'>): boolean {
  return (o.queryWords ?? 0) >= MESSAGE_WORDS || (o.querySentences ?? 0) >= MESSAGE_SENTENCES;
}

/**
 * The signals of a retrieval pass, each of which can be switched off (the evaluation's ablation table
 * turns them off one at a time to show what each earns on real conversations). All on in production.
 */
export const SIGNALS = ['short_term', 'semantic', 'long_term', 'period_list', 'overlap', 'spread', 'sessions', 'feedback', 'names', 'said_by_named', 'questions', 'question_frame', 'context', 'supersession', 'in_period', 'uncovered_period', 'priors'] as const;
export type Signal = (typeof SIGNALS)[number];
export type Signals = Record<Signal, boolean>;
export const ALL_SIGNALS: Signals = Object.fromEntries(SIGNALS.map((s) => [s, true])) as Signals;

/** list order for deduplication: a memory held by several lists is reported under the first */
const LIST_ORDER = ['short_term', 'long_term', 'semantic', 'period'] as const;

export interface RankOptions {
  topK: number;
  now: number;
  /** the period a time question names, if any */
  period?: TimeRange | null;
  /** the query's content words (for telling an update from the statement it replaces) */
  terms?: readonly string[];
  /** how many distinct content words the query's own text holds (see MESSAGE_WORDS) */
  queryWords?: number;
  /** how many sentences the query's own text holds (see MESSAGE_SENTENCES) */
  querySentences?: number;
  /** query words that name a participant (see Retriever.speakerTerms): who is asked about, not what */
  speakers?: readonly string[];
  /** list weights that differ from LIST_WEIGHTS (a lexical embedder's semantic list) */
  weights?: Partial<Record<ListName, number>>;
  /** the signals in use (all when absent) */
  signals?: Signals;
  /** results scoring below it are dropped */
  minScore?: number;
}

/** A memory with its score and the parts of it, before the cut to top_k. */
export interface Scored {
  candidate: Candidate;
  tier: Tier;
  ranks: Partial<Record<Tier, number>>;
  periodRank: number | null;
  overlapRank: number | null;
  similarity: number | null;
  bm25: number | null;
  fusion: number;
  relevance: number;
  contextOf: string | null;
  /** added as the answer to (or the question of) its hit: kept even when it is filler ("yes") */
  answers: boolean;
  /** the query names participants and someone else said this memory */
  saidByOther: boolean;
  /** the memory only asks (see asksOnly) */
  asks: boolean;
  supersededBy: string | null;
  supersededAt: string | null;
  inPeriod: boolean | null;
  tierPriority: number;
  recency: number;
  importance: number;
  score: number;
}

/**
 * Fuses the ranked lists into scored memories, deduplicated by content hash, best first (docs/architecture.md, retrieval).
 *
 *   score = 0.70 · relevance + 0.20 · in_period + 0.04 · tier_priority + 0.02 · recency + 0.06 · importance
 *
 * relevance is weighted reciprocal rank fusion, Σ over the lists that hold the memory of w / (RRF_K + rank),
 * divided by its largest possible value over the lists that returned anything (so it lies in [0, 1]);
 * in_period is 1 when the query names a period and the memory was created in it or is a turn dating
 * its event into it ("last year", said the year after; aboutPeriod) — 0 otherwise, and the part is
 * absent for queries naming none; tier_priority is 1 for the session's short-term turns
 * and 0.5 otherwise; recency halves every 90 days; importance is the stored or scored importance
 * (0.5 when unknown). Relevance keeps OTHER_SPEAKER_SHARE of itself when the query names participants
 * and someone else said the memory, and QUESTION_SHARE when the memory only asks.
 */
export function scoreCandidates(lists: RankedLists, o: RankOptions): Scored[] {
  const sig = o.signals ?? ALL_SIGNALS;
  const merged = new Map<string, { c: Candidate; tier: Tier | null; ranks: Partial<Record<ListName, number>>; similarity: number | null; bm25: number | null }>();
  for (const list of LIST_ORDER) {
    (lists[list] ?? []).forEach((c, i) => {
      const tier = list === 'period' ? null : list;
      let m = merged.get(c.content_hash);
      if (!m) {
        m = { c, tier, ranks: {}, similarity: null, bm25: null };
        merged.set(c.content_hash, m);
      }
      m.ranks[list] ??= i + 1;
      m.tier ??= tier;
      if (c.similarity !== undefined) m.similarity = Math.max(m.similarity ?? -1, c.similarity);
      if (c.bm25 !== undefined) m.bm25 = Math.max(m.bm25 ?? 0, c.bm25);
      if (m.c.importance === null && c.importance !== null) m.c = { ...m.c, importance: c.importance };
      if (m.c.part === undefined && c.part !== undefined) m.c = { ...m.c, part: c.part };
    });
  }
  if (sig.overlap) {
    const held = heldWords(merged, o);
    overlapList(merged, held, wordWeight(held, merged.size, isMessage(o))).forEach((hash, i) => (merged.get(hash)!.ranks.overlap = i + 1));
  }
  const weight = (l: ListName) => o.weights?.[l] ?? LIST_WEIGHTS[l];
  const answered = new Set<ListName>();
  for (const m of merged.values()) for (const l of Object.keys(m.ranks) as ListName[]) answered.add(l);
  const fusionMax = [...answered].reduce((s, l) => s + weight(l) / (RRF_K + 1), 0) || 1;
  const out: Scored[] = [];
  for (const { c, tier, ranks, similarity, bm25 } of merged.values()) {
    let rrf = 0;
    for (const [list, rank] of Object.entries(ranks) as Array<[ListName, number]>) rrf += weight(list) / (RRF_K + rank);
    const fusion = rrf / fusionMax;
    const { period: periodRank, overlap: overlapRank, ...tierRanks } = ranks;
    // a memory only the period list found is a long-term entry
    const t = tier ?? 'long_term';
    out.push(
      rescore(
        {
          candidate: c,
          tier: t,
          ranks: tierRanks,
          periodRank: periodRank ?? null,
          overlapRank: overlapRank ?? null,
          similarity,
          bm25,
          fusion,
          relevance: fusion,
          contextOf: null,
          answers: false,
          saidByOther: saidByOther(c, o),
          asks: asksOnly(c.content),
          supersededBy: null,
          supersededAt: null,
          inPeriod: o.period && sig.in_period ? aboutPeriod(c, o.period) : null,
          tierPriority: TIER_PRIORITY[t],
          recency: recencyOf(c.created_at, o.now),
          importance: c.importance ?? 0.5,
          score: 0,
        },
        sig,
      ),
    );
  }
  return sortScored(out);
}

type MergedCandidate = { c: Candidate; ranks: Partial<Record<ListName, number>> };

/**
 * The stems of the query's content words each candidate holding any holds, by content hash; speakers'
 * names aside: they say who, not what.
 */
function heldWords(merged: ReadonlyMap<string, MergedCandidate>, o: RankOptions): Map<string, string[]> {
  const speakers = new Set(o.speakers ?? []);
  const wanted = new Set(stems((o.terms ?? []).filter((t) => !speakers.has(t)).join(' ')));
  const out = new Map<string, string[]>();
  if (wanted.size === 0) return out;
  for (const [hash, m] of merged) {
    const held = heldStems(m.c.content, wanted);
    if (held.length > 0) out.set(hash, held);
  }
  return out;
}

/**
 * What a held query word is worth to the overlap list. Each word of a question counts
 * one: a question is short and each of its words is asked (LoCoMo dev, weighing them by rarity: −0.004
 * R@8). A message's words are not equally telling ("thought", "plan" and "week" beside "sourdough"):
 * a word held by few of the candidates says more about what the message refers to than one most of
 * them hold, so it counts ln(1 + candidates / candidates holding it). The candidates are the asking
 * user's own, so no other tenant's words move the weights.
 */
function wordWeight(heldBy: ReadonlyMap<string, string[]>, candidates: number, message: boolean): (word: string) => number {
  if (!message) return () => 1;
  const holding = new Map<string, number>();
  for (const held of heldBy.values()) for (const w of held) holding.set(w, (holding.get(w) ?? 0) + 1);
  return (w) => Math.log(1 + candidates / (holding.get(w) ?? 1));
}

const worth = (words: Iterable<string>, weigh: (word: string) => number): number => {
  let sum = 0;
  for (const w of words) sum += weigh(w);
  return sum;
};

/** the candidate's best rank in any list */
const bestRank = (m: MergedCandidate): number => Math.min(...(Object.values(m.ranks) as number[]));

/**
 * The `overlap` list: every candidate holding at least one of the query's content words (speakers'
 * names aside: they say who, not what), the most worth (wordWeight) of distinct words held first, ties
 * in their best list's order.
 */
function overlapList(merged: ReadonlyMap<string, MergedCandidate>, heldBy: ReadonlyMap<string, string[]>, weigh: (word: string) => number): string[] {
  const counted: Array<{ hash: string; n: number; best: number }> = [];
  for (const [hash, held] of heldBy) counted.push({ hash, n: worth(held, weigh), best: bestRank(merged.get(hash)!) });
  return counted.sort((a, b) => b.n - a.n || a.best - b.best).map((x) => x.hash);
}

/** a turn added beside a hit, with the share of the hit's relevance it gets */
export interface ContextAddition {
  parent: Scored;
  turn: Candidate;
  share: number;
}

/**
 * Adds the neighbouring turns of hits as context (an assistant's question and the user's answer belong
 * together): a neighbour gets CONTEXT_SHARE of its hit's relevance, or keeps its own when that is
 * higher, and is reported under its hit's tier with `context_of` naming the hit. A long neighbour
 * (more than SHORT_TURN_WORDS content words) is added only when a list found it itself: on RealMem dev
 * the long replies beside short hits that matched nothing took the places of other sessions' turns
 * (session R@8 +0.010 without them; LoCoMo, whose turns are short, −0.002).
 */
export function addContext(scored: readonly Scored[], additions: readonly ContextAddition[], o: RankOptions): Scored[] {
  const sig = o.signals ?? ALL_SIGNALS;
  const byHash = new Map(scored.map((s) => [s.candidate.content_hash, s]));
  for (const { parent, turn, share } of additions) {
    const relevance = share * parent.relevance;
    const existing = byHash.get(turn.content_hash);
    // a long turn that no list ranked among its candidates matched the query poorly though its length
    // gave it every chance: it is about something else, whatever stands next to it. A short one
    // ("Luna and Oliver!") cannot be expected to repeat the question's words
    if (!existing && !isShort(turn.content)) continue;
    if (existing) {
      if (relevance > existing.relevance) rescore(Object.assign(existing, { relevance, contextOf: parent.candidate.id, answers: share >= CONTEXT_SHARE }), sig);
      continue;
    }
    const s = rescore({
      candidate: turn,
      tier: parent.tier,
      ranks: {},
      periodRank: null,
      overlapRank: null,
      similarity: null,
      bm25: null,
      fusion: 0,
      relevance,
      contextOf: parent.candidate.id,
      answers: share >= CONTEXT_SHARE,
      saidByOther: saidByOther(turn, o),
      asks: asksOnly(turn.content),
      supersededBy: null,
      supersededAt: null,
      inPeriod: o.period && sig.in_period ? aboutPeriod(turn, o.period) : null,
      tierPriority: TIER_PRIORITY[parent.tier],
      recency: recencyOf(turn.created_at, o.now),
      importance: turn.importance ?? 0.5,
      score: 0,
    }, sig);
    byHash.set(turn.content_hash, s);
  }
  return sortScored([...byHash.values()]);
}

/** `compute`'s value, computed on the first call */
function lazily<T>(compute: () => T): () => T {
  let value: { v: T } | null = null;
  return () => (value ??= { v: compute() }).v;
}

/**
 * When two statements by the same person about the same subject conflict, the newer one is the
 * answer. A newer short statement (SHORT_TURN_WORDS) that announces a change ("new", "now", "moved",
 * "switched", "no longer", …) supersedes an older short statement by the same speaker that shares a
 * query word with it and tells about the same holder (subject.ts: "my sister's new job" is not the
 * speaker's own): the older one, unless it scores more than SUPERSEDE_MARGIN above the newer, names
 * it in `superseded_by` and ranks just below it. Questions are never statements, memories of different
 * speakers never supersede each other, and a query naming a period asks about that time, not the
 * current state: no supersession.
 */
export function supersede(scored: readonly Scored[], o: RankOptions): Scored[] {
  const terms = new Set(stems(o.terms?.join(' ') ?? ''));
  if (terms.size === 0 || o.period || !(o.signals ?? ALL_SIGNALS).supersession) return [...scored];
  const statements = scored
    .filter((s) => isStatement(s.candidate) && isShort(s.candidate.content))
    .map((s) => ({ s, matched: matchedTerms(s.candidate, terms) }))
    .filter(({ matched }) => matched.size > 0)
    // read only for a pair that passes every other test (most fail on the speaker or the change word)
    .map((x) => Object.assign(x, { holders: lazily(() => holdersOf(x.s.candidate.content, x.s.candidate.name)), announces: lazily(() => CHANGE.test(x.s.candidate.content)) }));
  // newest first, so a memory's score is final before any older one is compared with it
  statements.sort((a, b) => b.s.candidate.created_at.localeCompare(a.s.candidate.created_at));
  for (let i = 0; i < statements.length; i++) {
    const older = statements[i]!;
    for (let j = 0; j < i; j++) {
      const newer = statements[j]!;
      if (newer.s.candidate.created_at === older.s.candidate.created_at) continue;
      // the change word once a statement, not once a pair (a message's ~60 statements: ~1,800 pairs)
      if (speaker(newer.s.candidate) !== speaker(older.s.candidate) || !newer.announces()) continue;
      if (!sameSubject(older.matched, newer.matched) || !sameHolder(older.holders(), newer.holders())) continue;
      if (newer.s.score < older.s.score - SUPERSEDE_MARGIN) continue;
      if (older.s.supersededBy === null) {
        older.s.supersededBy = newer.s.candidate.id;
        older.s.supersededAt = newer.s.candidate.created_at;
      }
      if (older.s.score >= newer.s.score) older.s.score = round(newer.s.score - 1e-6);
    }
  }
  return sortScored([...scored]);
}

/**
 * The final cut: supersession, then the top_k best as retrieval results with their `explain` (for a
 * message, spread over sessions first). Filler ("ok thanks", "hi!") never pads the results unless it
 * answers a question a hit asked ("Do you have pets?" / "yes"), and results below `minScore` are
 * dropped.
 */
export function finalize(scored: readonly Scored[], o: RankOptions): RetrievalResult[] {
  const sig = o.signals ?? ALL_SIGNALS;
  const wanted = new Set(stems((o.terms ?? []).join(' ')));
  const kept = supersede(scored, o).filter((s) => s.score >= (o.minScore ?? 0) && (s.answers || !factOf(s.candidate.content, FILLER)));
  return (sig.spread && isMessage(o) ? spreadOverSessions(kept, sig.sessions) : kept)
    .slice(0, o.topK)
    .map((s) => toResult(s, sig, wanted));
}

/**
 * A message refers back to conversations (MESSAGE_WORDS), and several turns of one conversation tell
 * the LLM about the same one: each session's best memory comes first, then the rest in score order.
 * A memory of no session stands alone. On RealMem dev session R@8 0.606 → 0.635 (any share of 0.5 or
 * less left to a session's further memories gave the same, so none is kept); LoCoMo and the generated
 * set, whose questions are not messages, are unchanged — and applied to every query, spreading cost
 * LoCoMo 0.031 (its evidence is often two turns of one session).
 *
 * With `bySession`, the sessions come in the order of two votes fused as the lists are (RRF_K): their
 * best memory's place, and the session's own BM25 as one document (Candidate.session_bm25): a
 * conversation holding the message's words across its turns is the one it refers to more often than
 * the one whose single turn scored best (RealMem dev 0.672 → 0.685). A session the text search gave no
 * score has the first vote only.
 */
export function spreadOverSessions(sorted: readonly Scored[], bySession = false): Scored[] {
  const seen = new Set<string>();
  const firsts: Scored[] = [];
  const rest: Scored[] = [];
  for (const s of sorted) {
    const session = s.candidate.session_id ?? `\u0000${s.candidate.id}`;
    (seen.has(session) ? rest : firsts).push(s);
    seen.add(session);
  }
  return [...(bySession ? bySessionScore(sorted, firsts) : firsts), ...rest];
}

/** each session's best memory (`firsts`, best first) in the order of its place fused with its session's BM25 rank */
function bySessionScore(sorted: readonly Scored[], firsts: readonly Scored[]): Scored[] {
  const bm25 = new Map<string, number>();
  for (const { candidate: c } of sorted) if (c.session_id && c.session_bm25 !== undefined) bm25.set(c.session_id, Math.max(bm25.get(c.session_id) ?? 0, c.session_bm25));
  const ranked = [...bm25].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const sessionRank = new Map(ranked.map(([session], i) => [session, i + 1]));
  const vote = (s: Scored, place: number) => {
    const r = s.candidate.session_id ? sessionRank.get(s.candidate.session_id) : undefined;
    return 1 / (RRF_K + place) + (r === undefined ? 0 : 1 / (RRF_K + r));
  };
  return firsts
    .map((s, i) => ({ s, v: vote(s, i + 1), i }))
    .sort((a, b) => b.v - a.v || a.i - b.i)
    .map((x) => x.s);
}

/** scoreCandidates + finalize, for callers with no neighbouring turns to add. */
export function fuse(lists: RankedLists, o: RankOptions): RetrievalResult[] {
  return finalize(scoreCandidates(lists, o), o);
}

function rescore(s: Scored, sig: Signals): Scored {
  const priors = sig.priors ? WEIGHTS.tier_priority * s.tierPriority + WEIGHTS.recency * s.recency + WEIGHTS.importance * s.importance : 0;
  s.score = round(WEIGHTS.relevance * ownRelevance(s, sig) + WEIGHTS.period * (s.inPeriod ? 1 : 0) + priors);
  return s;
}

/**
 * The relevance a memory's score uses: its fused (or context) relevance, less when someone other than
 * the person asked about said it, or when it only asks. `relevance` itself stays
 * whole: a question that matched passes it on to its answer.
 */
function ownRelevance(s: Scored, sig: Signals): number {
  return s.relevance * (s.saidByOther && sig.said_by_named ? OTHER_SPEAKER_SHARE : 1) * (s.asks && sig.questions ? QUESTION_SHARE : 1);
}

function sortScored(xs: Scored[]): Scored[] {
  return xs.sort((a, b) => b.score - a.score || b.candidate.created_at.localeCompare(a.candidate.created_at) || a.candidate.id.localeCompare(b.candidate.id));
}

function recencyOf(createdAt: string, now: number): number {
  const ageDays = Math.max(0, (now - Date.parse(createdAt)) / 86_400_000);
  return Math.pow(0.5, ageDays / RECENCY_HALF_LIFE_DAYS);
}

/** what asksOnly has read of texts holding a "?", in characters (tests count work with it) */
export const asksWork = { chars: 0 };

/** kept by text (text-cache.ts): every candidate of every pass is asked (~2% of a real-text retrieve's CPU, tested afresh each time) */
const FILLER: TextFact<boolean> = { name: 'filler', compute: isFiller };

/** kept by text (text-cache.ts): every candidate of every pass asks, and the same ones come back */
const ASKS_ONLY: TextFact<boolean> = {
  name: 'asks only',
  compute: (content) => {
    asksWork.chars += content.length;
    return !holdsStems(withoutQuestions(content), 3);
  },
};

/**
 * Computes, for a candidate's text, the facts every candidate's ranking reads (its stems, whether it
 * only asks), so that a pass may compute those of texts nothing has read yet before it ranks them
 * (retrieve.ts, inTurns). Facts are kept by text: computed here, ranking finds them.
 */
export function readRankingFacts(content: string): void {
  heldStems(content, []);
  asksOnly(content);
}

/**
 * A turn whose substance is its questions: what is left once the sentences ending in "?" are taken
 * out holds fewer than three content words ("Wow, nice! What breed is it?").
 */
export function asksOnly(content: string): boolean {
  if (!content.includes('?')) return false;
  return factOf(content, ASKS_ONLY);
}

/**
 * The text with its questions taken out: each run of characters up to "?" (runs end at ".", "!",
 * "?" or a line break), with its "?"s, becomes one space — what `replace(/[^.!?\n]*\?+/g, ' ')` gives,
 * in one pass. That regex tries again from every character of a run that ends otherwise: quadratic,
 * 6.3 s for a 30,000-character turn with one question and no full stop.
 */
export function withoutQuestions(text: string): string {
  let out = '';
  let run = 0;
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '?') {
      while (text[i] === '?') i++;
      out += ' ';
      run = i;
    } else if (c === '.' || c === '!' || c === '\n') {
      out += text.slice(run, ++i);
      run = i;
    } else i++;
  }
  return out + text.slice(run);
}

/** The query names participants (RankOptions.speakers) and none of them said this memory. */
function saidByOther(c: Candidate, o: RankOptions): boolean {
  if (!o.speakers?.length) return false;
  const named = new Set(o.speakers);
  return !(c.name ? words(c.name) : []).some((w) => named.has(w));
}

function speaker(c: Candidate): string {
  return `${c.role}\u0000${c.name ?? ''}`;
}

/** words with which people announce that something changed */
const CHANGE =
  /\b(new|now|no longer|anymore|any more|switched|switching|moved|moving|changed|changing|instead|replaced|quit|sold|traded|gave up|as of|from now on|these days|update|updated)\b/i;

/** A turn that says one thing (SHORT_TURN_WORDS). */
export function isShort(content: string): boolean {
  return stems(content).length <= SHORT_TURN_WORDS;
}

function isStatement(c: Candidate): boolean {
  return c.kind === 'turn' && !c.content.includes('?');
}

function matchedTerms(c: Candidate, terms: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const s of stems(c.content)) if (terms.has(s)) out.add(s);
  return out;
}

function toResult(s: Scored, sig: Signals, wanted: ReadonlySet<string>): RetrievalResult {
  const c = s.candidate;
  // the words the query shares with the turn say where it matched; failing them, the passage whose
  // vector did (a paraphrase, or a query word the text tier does not index)
  const passage = matchedPassage(c.content, wanted) ?? (c.part !== undefined ? vectorPassage(c.content, c.part) : null);
  const explain: Explain = {
    similarity: s.similarity,
    bm25: s.bm25,
    ranks: s.ranks,
    period_rank: s.periodRank,
    overlap_rank: s.overlapRank,
    fusion: round(s.fusion),
    context_of: s.contextOf,
    relevance: round(ownRelevance(s, sig)),
    in_period: s.inPeriod,
    tier_priority: s.tierPriority,
    recency: round(s.recency),
    importance: round(s.importance),
    superseded_by: s.supersededBy,
    superseded_at: s.supersededAt,
  };
  return {
    id: c.id,
    user_id: c.user_id,
    session_id: c.session_id,
    role: c.role,
    name: c.name,
    kind: c.kind,
    content: c.content,
    tier: s.tier,
    score: round(s.score),
    created_at: c.created_at,
    metadata: c.metadata ?? null,
    ...(passage ? { passage } : {}),
    explain,
  };
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
