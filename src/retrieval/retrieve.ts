import type { MemoryEntry, RetrievalResult, Tier } from '../domain/entry.js';
import { filterTest } from '../domain/filters.js';
import { kindOf, recordOf } from '../domain/record.js';
import type { Turn } from '../domain/turn.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import { warnOnce, type Logger } from '../logger.js';
import type { ListOptions, LongTermStore } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { Around } from '../ports/turn-log.js';
import type { VectorIndex } from '../ports/vector-index.js';
import { throwIfAbandoned, withBudget, type TierStatus } from './budget.js';
import { feedbackWords, readFeedbackFacts, withAddedWords } from './feedback.js';
import { inTurns, Turns } from './in-turns.js';
import { formatPromptBlocks } from './prompt-blocks.js';
import { QUESTION_FRAME, changeTerms, heldStems, queryTerms, sentenceCount, stems, words } from './query-terms.js';
import { ALL_SIGNALS, CONTEXT_SHARE, isMessage, LEXICAL_SEMANTIC_WEIGHT, NEIGHBOUR_SHARE, addContext, isShort, finalize, readRankingFacts, scoreCandidates, type Candidate, type ContextAddition, type RankOptions, type Scored, type Signals } from './rank.js';
import type { RetrieveRequest } from './request.js';
import { askedOf, asksAboutSelf } from './subject.js';
import { parseTimeRange, withoutTimeExpression, type TimeRange } from './time-range.js';

export interface TierReport {
  backend: string;
  status: TierStatus;
  ms: number;
  count: number;
  error?: string;
}

/** How one pass is run, besides its request. */
export interface RetrieveOptions {
  /**
   * The caller's signal: aborted when nobody waits for the answer any more (an HTTP client that closed
   * its connection). Each tier's budget signal aborts with it, so work not started is not done; the
   * later stages (context reads, ranking, prompt blocks) are skipped, and the pass rejects with a
   * `RequestAbortedError`. Library callers, the CLI and MCP over stdio need not pass one.
   */
  signal?: AbortSignal;
}

export interface RetrieveResponse {
  results: RetrievalResult[];
  prompt_blocks: string;
  tiers: Record<Tier, TierReport>;
}

/**
 * Where the turns around a hit come from (the turn log): a question and its answer are one piece of
 * context, and often only one of the two shares words with the query.
 */
export interface ContextSource {
  neighbours(userId: string, ids: readonly string[], before: number, after: number): Map<string, Around> | Promise<Map<string, Around>>;
}

export interface RetrieverDeps {
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  longTerm: LongTermStore;
  embedders: EmbedderProvider;
  log: Logger;
  budgets: Record<Tier, number>;
  /** results less relevant than this stay out of prompt blocks (config prompt_min_relevance; default 0: all) */
  promptMinRelevance?: number;
  /** neighbouring turns of hits; without it no context is added */
  context?: ContextSource;
  /** signals switched off (the evaluation's ablation); all on when absent */
  signals?: Partial<Signals>;
  /** called once per tier per call with its outcome (metrics) */
  onTier?: (tier: Tier, report: TierReport) => void;
}

/** how many candidates each tier contributes, relative to top_k, before fusion */
export const CANDIDATES_PER_RESULT = 3;
/**
 * the top_k the long-term text search is read for at least, so that it finds the same candidates
 * whether a retrieve asks for 8 results or 20 (a message's second search aside: see longTerm): the
 * overlap list and a message's feedback words rank all of them, and a shallower search missed
 * memories they would put first. Asked at the default top_k 8, R@8 RealMem dev 0.686 → 0.705,
 * LoCoMo dev 0.750 → 0.754 (docs/evaluation.md, "Asked at the default top_k": the semantic list as
 * deep too gained +0.003 and +0.004 for three times the CPU)
 */
export const TEXT_TOP_K_MIN = 20;
/** the newest turns of the session are always candidates, relevant to the query or not */
const ALWAYS_RECENT = 2;
/** how long a retrieval waits for an embedder still loading before it skips the semantic tier */
const LOADING_GRACE_MS = 20;
/** entries of a named period read before ranking them (newest first, then ordered by importance) */
const PERIOD_SCAN = 200;
/** newest long-term entries whose speakers count as the user's participants (see speakerTerms) */
const PARTICIPANT_SCAN = 200;
const PARTICIPANT_CACHE_MS = 60_000;
const PARTICIPANT_CACHE_USERS = 10_000;
/** the best hits whose neighbouring turns are read (a fixed number: top_k does not change what is found) */
const CONTEXT_HITS = 8;
/** a neighbour that is not an answer is read only when it holds this many content words */
const NEIGHBOUR_MIN_WORDS = 3;


interface LongTermLists {
  text: Candidate[];
  period: Candidate[];
}

/**
 * The one retrieval pass (docs/architecture.md, retrieval): the three tiers are read concurrently, each under its own time
 * budget, then fused, deduplicated and cut to top_k. Never waits for a queue. A time expression in the
 * query ("last May") is taken out of the text the tiers search and becomes a period: the long-term
 * entries created in it form one more ranked list, and being in it is part of the score.
 */
export class Retriever {
  private readonly signals: Signals;
  private readonly participants = new Map<string, { names: Set<string>; until: number }>();

  constructor(private readonly deps: RetrieverDeps) {
    this.signals = { ...ALL_SIGNALS, ...deps.signals };
  }

  /** The prompt text of these results, without those under the relevance floor (see formatPromptBlocks). */
  promptBlocks(results: readonly RetrievalResult[]): string {
    return formatPromptBlocks(results, this.deps.promptMinRelevance ?? 0);
  }

  async retrieve(req: RetrieveRequest, now = Date.now(), { signal }: RetrieveOptions = {}): Promise<RetrieveResponse> {
    const { deps } = this;
    throwIfAbandoned(signal);
    const turns = new Turns();
    const pool = req.top_k * CANDIDATES_PER_RESULT;
    const textPool = Math.max(req.top_k, TEXT_TOP_K_MIN) * CANDIDATES_PER_RESULT;
    const period = parseTimeRange(req.query, now);
    const asked = withoutTimeExpression(req.query, period);
    const withoutFrame = (t: string) => (this.signals.question_frame ? withoutWords(t, [...QUESTION_FRAME]) : t);
    const text = withoutFrame(asked);
    const own = queryTerms(text);
    // a question about the asker's state ("where do I live?") is also asked of the words that announce
    // its change ("moved"): the newest answer often shares no word with the question. Not a question
    // about someone else's ("my sister's job"): the asker's own change would answer it wrongly
    const changes = this.signals.supersession && period === null && asksAboutSelf(asked) ? changeTerms(own) : [];
    const terms = [...own, ...changes];
    const speakers = this.signals.names ? await this.speakerTerms(req.user_id, terms) : [];
    const querySentences = sentenceCount(req.query);
    // a message's sessions are ordered by their own score too (spreadOverSessions)
    const bySession = this.signals.spread && this.signals.sessions && isMessage({ queryWords: own.length, querySentences });
    // who is asked about is matched against who said a memory; the semantic tier compares texts, so
    // the names leave its query (unless nothing else is left)
    const about = speakers.length > 0 ? withoutWords(text, speakers) : text;
    // each tier's reads run in one piece once begun (an embedded store's are synchronous): the event
    // loop turns between the pass's steps once it has run a slice (a fresh process's first retrieve on
    // real text held it 20–35 ms at a time, and a probe's /health waited 44–68 ms behind two or three)
    await turns.ifDue();
    throwIfAbandoned(signal);
    const [st, sem, lt] = await Promise.all([
      withBudget(() => this.shortTerm(req, terms), deps.budgets.short_term, [] as Candidate[], signal),
      withBudget((tier) => this.semantic(req, about.trim() === '' ? text : about, pool, turns, tier), deps.budgets.semantic, null as Candidate[] | null, signal),
      withBudget((tier) => this.longTerm(req, { text: changes.length > 0 ? `${text} ${changes.join(' ')}` : text, uncovered: period && this.signals.uncovered_period ? withoutFrame(req.query) : null }, speakers, period, textPool, bySession, turns, tier), deps.budgets.long_term, { text: [], period: [] } as LongTermLists, signal),
    ]);
    // nobody waits for the answer: no tier is reported (an abandoned tier is no timeout), nothing ranked
    throwIfAbandoned(signal);
    const semStatus: TierStatus = sem.status === 'ok' && sem.value === null ? 'skipped' : sem.status;
    const tiers: Record<Tier, TierReport> = {
      short_term: report(deps.shortTerm.backend, st.status, st.ms, st.value.length, st.error),
      semantic: report(deps.vectors.backend, semStatus, sem.ms, sem.value?.length ?? 0, sem.error),
      long_term: report(deps.longTerm.backend, lt.status, lt.ms, lt.value.text.length + lt.value.period.length, lt.error),
    };
    for (const [tier, r] of Object.entries(tiers) as Array<[Tier, TierReport]>) {
      if (r.status === 'timeout' || r.status === 'error') deps.log.warn({ tier, ...r }, 'tier skipped for this retrieval');
      deps.onTier?.(tier, r);
    }
    const sig = this.signals;
    const lexical = deps.embedders.current()?.lexical === true;
    const options: RankOptions = { topK: req.top_k, now, period, terms, queryWords: own.length, querySentences, speakers, signals: sig, minScore: req.min_score, ...(lexical ? { weights: { semantic: LEXICAL_SEMANTIC_WEIGHT } } : {}) };
    const lists = {
      short_term: sig.short_term ? st.value : [],
      semantic: sig.semantic ? (sem.value ?? []) : [],
      long_term: sig.long_term ? lt.value.text : [],
      period: sig.period_list ? lt.value.period : [],
    };
    // a fresh process's first pass computes the facts of texts nothing has read yet (~100 candidates'
    // stems: 20–40 ms in one turn, and every request waited behind it): a few at a time, the event
    // loop turning between
    await inTurns(Object.values(lists).flatMap((list) => list.map((c) => c.content)), readRankingFacts, turns);
    throwIfAbandoned(signal);
    let scored = scoreCandidates(lists, options);
    await turns.ifDue();
    // the hits whose neighbours are read are the most relevant, whoever said them: another speaker's
    // question ranks low itself but leads to the named person's answer. Not for a message (see
    // MESSAGE_WORDS, MESSAGE_SENTENCES): it refers back to a conversation, not to one turn whose neighbour completes it
    if (deps.context && sig.context && !isMessage(options)) scored = addContext(scored, await this.context(req, [...scored].sort((a, b) => b.relevance - a.relevance).slice(0, CONTEXT_HITS), signal), options);
    throwIfAbandoned(signal);
    const results = finalize(scored, options);
    return { results, prompt_blocks: this.promptBlocks(results), tiers };
  }

  /**
   * The query words that name someone who speaks in the user's memories ("What has Melanie painted?").
   * The participants are read from the user's newest long-term entries and kept for a minute: the
   * people of a conversation change rarely, and a lookup per query would cost more than the rest.
   */
  private async speakerTerms(userId: string, terms: readonly string[]): Promise<string[]> {
    if (terms.length === 0) return [];
    const now = Date.now();
    let known = this.participants.get(userId);
    if (!known || known.until <= now) {
      let names = new Set<string>();
      try {
        const { longTerm } = this.deps;
        const said = longTerm.participants
          ? await longTerm.participants(userId, PARTICIPANT_SCAN)
          : (await longTerm.recent(userId, { limit: PARTICIPANT_SCAN })).flatMap((e) => (e.name ? [e.name] : []));
        names = new Set(said.flatMap((n) => words(n)));
      } catch (err) {
        warnOnce(this.deps.log, 'participants-failed', { err: (err as Error).message }, 'participant names could not be read; names in queries are matched as text');
      }
      if (this.participants.size >= PARTICIPANT_CACHE_USERS) this.participants.clear();
      known = { names, until: now + PARTICIPANT_CACHE_MS };
      this.participants.set(userId, known);
    }
    return terms.filter((t) => known.names.has(t));
  }

  /** The session's recent turns, those sharing words with the query first, then the newest. */
  private async shortTerm(req: RetrieveRequest, terms: readonly string[]): Promise<Candidate[]> {
    if (req.session_id === undefined) return [];
    // the session's turns are few (short_term_max_turns): the filter is applied here, before ranking
    const allows = filterTest(req.filters);
    const turns = (await this.deps.shortTerm.recent(req.user_id, req.session_id)).map((t) => ({ t, candidate: turnCandidate(t) })).filter(({ candidate }) => allows(candidate));
    const wanted = new Set(stems(terms.join(' ')));
    const scored = turns.map(({ t, candidate }, i) => {
      // the content's stems and the name's apart, not those of the two joined: the content's are kept
      // by text (a long turn's, pass after pass); a joined copy would be stemmed, and kept, again
      const held = new Set([...heldStems(t.content, wanted), ...heldStems(t.name ?? '', wanted)]);
      const overlap = held.size;
      return { t, candidate, overlap, newest: i >= turns.length - ALWAYS_RECENT };
    });
    return scored
      .filter((s) => s.overlap > 0 || s.newest)
      .sort((a, b) => b.overlap - a.overlap || b.t.created_at.localeCompare(a.t.created_at))
      .map((s) => s.candidate);
  }

  private async semantic(req: RetrieveRequest, text: string, k: number, turns: Turns, signal?: AbortSignal): Promise<Candidate[] | null> {
    let embedder = this.deps.embedders.current();
    if (!embedder && this.deps.embedders.status === 'loading') {
      // a model that is about to be ready (the built-in hash embedder is, a tick after start-up) is
      // worth a moment's wait; a download is not, and the tier is skipped until it finishes
      await Promise.race([this.deps.embedders.ready(), new Promise((resolve) => setTimeout(resolve, LOADING_GRACE_MS).unref())]);
      embedder = this.deps.embedders.current();
    }
    // an embedding server that does not answer was reported once, when it stopped: the tier is skipped
    // without waiting on it until the provider's probe finds it back
    if (!embedder || this.deps.embedders.status === 'unavailable') {
      // a failed load was already reported once by the provider; only a model still loading is news here
      if (this.deps.embedders.status === 'loading') {
        warnOnce(this.deps.log, 'semantic-loading', { model: this.deps.embedders.model }, 'the embedding model is still loading; the semantic tier is skipped until it is ready');
      }
      return null;
    }
    if (text.trim() === '') return [];
    const [query] = await embedder.embed([text], 'query');
    await turns.ifDue();
    // every session of the user: a new session must find what was said in earlier ones
    const hits = await this.deps.vectors.search(embedder, query!, { user_id: req.user_id, where: req.filters }, k, signal);
    return hits
      .filter((h) => h.score > 0)
      .map((h) => ({ id: h.id, ...h.payload, importance: null, similarity: round(h.score), ...(h.part > 0 ? { part: h.part } : {}) }));
  }

  /**
   * BM25 over the user's entries; and when the query names a period, that period's entries: those
   * matching the text first, then the rest, those of the speaker the question asks about first
   * (askedFirst), then by importance. A period holding none of the entries the user may see is no
   * period to look in: its words are words of the query like the others ("3 litres it is for today"
   * about "Today is a solid 3", asked before the day's first entry), and the text is searched with
   * them (`uncovered`: the query with its time expression).
   */
  private async longTerm(req: RetrieveRequest, query: { text: string; uncovered: string | null }, speakerTerms: string[], period: TimeRange | null, k: number, bySession: boolean, turns: Turns, signal?: AbortSignal): Promise<LongTermLists> {
    const { longTerm } = this.deps;
    const where = req.filters;
    const search = (text: string, range: { createdFrom?: string; createdBefore?: string } = {}, expansion?: ListOptions['expansion'], limit = k) =>
      longTerm.searchText(req.user_id, text, { limit, speakerTerms, ...range, where, ...(bySession ? { bySession } : {}), ...(expansion ? { expansion } : {}), ...(signal ? { signal } : {}) });
    // the period's entries first: a period holding none has no matches to search for
    await turns.ifDue();
    const inPeriod = period ? await longTerm.recent(req.user_id, { limit: PERIOD_SCAN, createdFrom: period.from, createdBefore: period.to, where }) : [];
    const covered = period && inPeriod.length > 0 ? { createdFrom: period.from, createdBefore: period.to } : null;
    const asked = period && !covered && query.uncovered !== null ? query.uncovered : query.text;
    const [found, inPeriodHits] = await Promise.all([search(asked), covered ? search(query.text, covered) : []]);
    // a message is searched once more, for the words of the sessions it found best (feedbackWords),
    // as deep as its top_k asks: what it finds is summed into the first search's hits, and reading it
    // as deep as the first gained nothing for its cost (asked at top_k 8: RealMem dev R@8 0.699 read
    // 60 deep, 0.705 read 24 deep, within the noise, for half the CPU the deeper first search adds)
    const feedback = bySession && this.signals.feedback;
    // the words of texts nothing has read yet are counted a few at a time, as ranking's facts are (retrieve)
    if (feedback) await inTurns(found.map((h) => h.entry.content), readFeedbackFacts, turns);
    const expansion = feedback ? feedbackWords(found, queryTerms(asked).length) : [];
    if (expansion.length > 0) await turns.ifDue();
    const hits = expansion.length > 0 ? withAddedWords(found, await search('', {}, expansion, req.top_k * CANDIDATES_PER_RESULT), k) : found;
    const periodList: Candidate[] = inPeriodHits.map(({ entry, bm25 }) => entryCandidate(entry, { bm25: round(bm25) }));
    const seen = new Set(periodList.map((c) => c.id));
    const rest = inPeriod.filter((e) => !seen.has(e.id));
    // the question's person is read only when there is an order to decide (a period was named)
    if (rest.length > 1) {
      const first = askedFirst(req.query);
      rest.sort((a, b) => first(b) - first(a) || b.importance - a.importance || b.created_at.localeCompare(a.created_at));
    }
    for (const e of rest.slice(0, Math.max(0, k - periodList.length))) periodList.push(entryCandidate(e));
    return {
      text: hits.map(({ entry, bm25, session_bm25 }) => entryCandidate(entry, session_bm25 === undefined ? { bm25: round(bm25) } : { bm25: round(bm25), session_bm25: round(session_bm25) })),
      period: periodList,
    };
  }

  /**
   * The turns just before and after a hit in its session, whoever the speakers are: a user and an
   * assistant, or two people, are read alike (the same conversation with its roles relabelled ranks the
   * same). A question and its answer are one piece of context, and often only one of the two shares
   * words with the query ("What are their names?" / "Luna and Oliver!"): the other speaker's turn after a
   * hit that asks something, or the other speaker's question before a hit, gets CONTEXT_SHARE of the
   * hit's relevance; any other neighbour NEIGHBOUR_SHARE (the answer is often spread over two turns). A
   * follow-up exchange is read both ways: the hit's speaker's answer to the other's follow-up question
   * after the hit (CONTEXT_SHARE), and, when the hit itself answers such a question, the statement of its
   * speaker that the question followed up (NEIGHBOUR_SHARE: "I went to a pride parade last week" / "How
   * was it?" / the hit "So much love, I felt at home"). Only hits that matched the query are read (not
   * the period's entries listed by importance alone), and only short ones (SHORT_TURN_WORDS): a long
   * turn says what it means on its own, and its neighbours would push other matches out. Best effort: a
   * failing lookup adds no context and never fails the pass.
   */
  private async context(req: RetrieveRequest, hits: readonly Scored[], signal?: AbortSignal): Promise<ContextAddition[]> {
    const out: ContextAddition[] = [];
    const allows = filterTest(req.filters);
    try {
      const read = hits.filter(({ candidate: h, ranks }) => h.kind === 'turn' && Object.keys(ranks).length > 0 && isShort(h.content));
      // a caller that left: no read (the pass throws once this returns)
      if (read.length === 0 || signal?.aborted) return out;
      const arounds = await this.deps.context!.neighbours(req.user_id, read.map((hit) => hit.candidate.id), 2, 2);
      for (const hit of read) {
        const h = hit.candidate;
        const around = arounds.get(h.id);
        if (!around) continue;
        const add = (t: Turn | undefined, pairs: boolean) => {
          if (!t || t.user_id !== req.user_id) return;
          const turn = turnCandidate(t);
          if (!allows(turn)) return;
          // "Noted!" beside a statement completes nothing; "yes" after a question does
          if (!pairs && stems(t.content).length < NEIGHBOUR_MIN_WORDS) return;
          out.push({ parent: hit, turn, share: pairs ? CONTEXT_SHARE : NEIGHBOUR_SHARE });
        };
        const next = around.after[0];
        // oldest first: the turn just before the hit is the last one
        const prev = around.before.at(-1);
        add(next, next !== undefined && speakerOf(next) !== speakerOf(h) && isQuestion(h.content));
        add(prev, prev !== undefined && speakerOf(prev) !== speakerOf(h) && isQuestion(prev.content));
        // the other speaker asks a follow-up ("What did you have?") and the hit's speaker answers it
        // in the turn after: that answer belongs to the hit as much as an answer to the hit itself
        const then = around.after[1];
        if (next && then && speakerOf(next) !== speakerOf(h) && isQuestion(next.content) && speakerOf(then) === speakerOf(h)) add(then, true);
        // and backwards: the hit answers the other speaker's follow-up question, which asked about what
        // the hit's speaker said just before it; that statement often holds the words the hit lacks
        const earlier = around.before.at(-2);
        if (prev && earlier && speakerOf(prev) !== speakerOf(h) && isQuestion(prev.content) && speakerOf(earlier) === speakerOf(h)) add(earlier, false);
      }
    } catch (err) {
      warnOnce(this.deps.log, 'context-failed', { err: (err as Error).message }, 'neighbouring turns could not be read; results carry no context');
    }
    return out;
  }
}

/**
 * 1 for an entry said by the one a question asks about by its person (askedOf): in "what did I do last
 * June?" the asker is the user, in "what did you suggest in May?" the one asked is the assistant. It
 * orders a period's entries that match none of the query's words, where nothing else tells them apart.
 */
function askedFirst(query: string): (e: MemoryEntry) => number {
  const whose = askedOf(query);
  if (whose === null) return () => 0;
  const role = whose === 'asker' ? 'user' : 'assistant';
  return (e) => (e.role === role ? 1 : 0);
}

function speakerOf(t: { role: string; name: string | null | undefined }): string {
  return `${t.role}\u0000${t.name ?? ''}`;
}

/** The text without the given (lower-cased) words. */
function withoutWords(text: string, drop: readonly string[]): string {
  const gone = new Set(drop);
  return text
    .split(/\s+/)
    .filter((w) => !words(w).some((x) => gone.has(x)))
    .join(' ');
}

/** A turn that asks something, wherever its question mark sits ("Which dentist? I can book it."). */
function isQuestion(text: string): boolean {
  return text.includes('?');
}

/**
 * A long-term entry as a candidate, with what its list scored it. Added onto recordOf's object, not
 * spread into another: Node 20's V8 builds `{ ...o, k }` on a slow path (0.5–1.8 µs against ~0.1 for
 * `Object.assign`), and a retrieve builds some fifty candidates.
 */
function entryCandidate(e: MemoryEntry, scores: Pick<Candidate, 'bm25' | 'session_bm25'> = {}): Candidate {
  return Object.assign(recordOf(e), { kind: e.kind, importance: e.importance }, scores);
}

function turnCandidate(t: Turn): Candidate {
  return Object.assign(recordOf(t), { kind: kindOf(t), importance: t.importance });
}

function report(backend: string, status: TierStatus, ms: number, count: number, error?: string): TierReport {
  const r: TierReport = { backend, status, ms: Math.round(ms * 100) / 100, count };
  if (error) r.error = error;
  return r;
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
