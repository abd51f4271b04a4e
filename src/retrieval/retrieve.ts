import type { MemoryEntry, RetrievalResult, Tier } from '../domain/entry.js';
import type { Turn } from '../domain/turn.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import { warnOnce, type Logger } from '../logger.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { VectorIndex } from '../ports/vector-index.js';
import { withBudget, type TierStatus } from './budget.js';
import { formatPromptBlocks } from './prompt-blocks.js';
import { queryTerms, stems } from './query-terms.js';
import { ALL_SIGNALS, addContext, finalize, scoreCandidates, type Candidate, type RankOptions, type Scored, type Signals } from './rank.js';
import type { RetrieveRequest } from './request.js';
import { parseTimeRange, withoutTimeExpression, type TimeRange } from './time-range.js';

export interface TierReport {
  backend: string;
  status: TierStatus;
  ms: number;
  count: number;
  error?: string;
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
  neighbours(userId: string, id: string, before: number, after: number): { before: Turn[]; after: Turn[] } | null | Promise<{ before: Turn[]; after: Turn[] } | null>;
}

export interface RetrieverDeps {
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  longTerm: LongTermStore;
  embedders: EmbedderProvider;
  log: Logger;
  budgets: Record<Tier, number>;
  /** neighbouring turns of hits; without it no context is added */
  context?: ContextSource;
  /** signals switched off (the evaluation's ablation); all on when absent */
  signals?: Partial<Signals>;
  /** called once per tier per call with its outcome (metrics) */
  onTier?: (tier: Tier, report: TierReport) => void;
}

/** how many candidates each tier contributes, relative to top_k, before fusion */
const CANDIDATES_PER_RESULT = 3;
/** the newest turns of the session are always candidates, relevant to the query or not */
const ALWAYS_RECENT = 2;
/** entries of a named period read before ranking them (newest first, then ordered by importance) */
const PERIOD_SCAN = 200;

interface LongTermLists {
  text: Candidate[];
  period: Candidate[];
}

/**
 * The one retrieval pass (SPEC §4): the three tiers are read concurrently, each under its own time
 * budget, then fused, deduplicated and cut to top_k. Never waits for a queue. A time expression in the
 * query ("last May") is taken out of the text the tiers search and becomes a period: the long-term
 * entries created in it form one more ranked list, and being in it is part of the score.
 */
export class Retriever {
  private readonly signals: Signals;

  constructor(private readonly deps: RetrieverDeps) {
    this.signals = { ...ALL_SIGNALS, ...deps.signals };
  }

  async retrieve(req: RetrieveRequest, now = Date.now()): Promise<RetrieveResponse> {
    const { deps } = this;
    const pool = req.top_k * CANDIDATES_PER_RESULT;
    const period = parseTimeRange(req.query, now);
    const text = withoutTimeExpression(req.query, period);
    const terms = queryTerms(text);
    const [st, sem, lt] = await Promise.all([
      withBudget(() => this.shortTerm(req, terms), deps.budgets.short_term, [] as Candidate[]),
      withBudget(() => this.semantic(req, text, pool), deps.budgets.semantic, null as Candidate[] | null),
      withBudget(() => this.longTerm(req, text, period, pool), deps.budgets.long_term, { text: [], period: [] } as LongTermLists),
    ]);
    const semStatus: TierStatus = sem.status === 'ok' && sem.value === null ? 'skipped' : sem.status;
    const tiers: Record<Tier, TierReport> = {
      short_term: report(deps.shortTerm.backend, st.status, st.ms, st.value.length, st.error),
      semantic: report(deps.vectors.backend, semStatus, sem.ms, sem.value?.length ?? 0, sem.error),
      long_term: report('sqlite', lt.status, lt.ms, lt.value.text.length + lt.value.period.length, lt.error),
    };
    for (const [tier, r] of Object.entries(tiers) as Array<[Tier, TierReport]>) {
      if (r.status === 'timeout' || r.status === 'error') deps.log.warn({ tier, ...r }, 'tier skipped for this retrieval');
      deps.onTier?.(tier, r);
    }
    const sig = this.signals;
    const options: RankOptions = { topK: req.top_k, now, period, terms, signals: sig };
    const lists = {
      short_term: sig.short_term ? st.value : [],
      semantic: sig.semantic ? (sem.value ?? []) : [],
      long_term: sig.long_term ? lt.value.text : [],
      period: sig.period_list ? lt.value.period : [],
    };
    let scored = scoreCandidates(lists, options);
    if (deps.context && sig.context) scored = addContext(scored, await this.context(req, scored.slice(0, Math.ceil(req.top_k / 2))), options);
    const results = finalize(scored, options);
    return { results, prompt_blocks: formatPromptBlocks(results), tiers };
  }

  /** The session's recent turns, those sharing words with the query first, then the newest. */
  private async shortTerm(req: RetrieveRequest, terms: readonly string[]): Promise<Candidate[]> {
    if (req.session_id === undefined) return [];
    const turns = await this.deps.shortTerm.recent(req.user_id, req.session_id);
    const wanted = new Set(stems(terms.join(' ')));
    const scored = turns.map((t, i) => {
      let overlap = 0;
      for (const s of stems(`${t.content} ${t.name ?? ''}`)) if (wanted.has(s)) overlap++;
      return { t, overlap, newest: i >= turns.length - ALWAYS_RECENT };
    });
    return scored
      .filter((s) => s.overlap > 0 || s.newest)
      .sort((a, b) => b.overlap - a.overlap || b.t.created_at.localeCompare(a.t.created_at))
      .map((s) => turnCandidate(s.t));
  }

  private async semantic(req: RetrieveRequest, text: string, k: number): Promise<Candidate[] | null> {
    const embedder = this.deps.embedders.current();
    if (!embedder) {
      // a failed load was already reported once by the provider; only a model still loading is news here
      if (this.deps.embedders.status === 'loading') {
        warnOnce(this.deps.log, 'semantic-loading', { model: this.deps.embedders.model }, 'the embedding model is still loading; the semantic tier is skipped until it is ready');
      }
      return null;
    }
    if (text.trim() === '') return [];
    const [query] = await embedder.embed([text]);
    // every session of the user: a new session must find what was said in earlier ones
    const hits = await this.deps.vectors.search(embedder, query!, { user_id: req.user_id }, k);
    return hits
      .filter((h) => h.score > 0)
      .map((h) => ({ id: h.id, ...h.payload, importance: null, similarity: round(h.score) }));
  }

  /**
   * BM25 over the user's entries; and when the query names a period, that period's entries: those
   * matching the text first, then the rest by importance.
   */
  private async longTerm(req: RetrieveRequest, text: string, period: TimeRange | null, k: number): Promise<LongTermLists> {
    const { longTerm } = this.deps;
    const [hits, inPeriodHits, inPeriod] = await Promise.all([
      longTerm.searchText(req.user_id, text, { limit: k }),
      period ? longTerm.searchText(req.user_id, text, { limit: k, createdFrom: period.from, createdBefore: period.to }) : [],
      period ? longTerm.recent(req.user_id, { limit: PERIOD_SCAN, createdFrom: period.from, createdBefore: period.to }) : [],
    ]);
    const periodList: Candidate[] = inPeriodHits.map(({ entry, bm25 }) => ({ ...entryCandidate(entry), bm25: round(bm25) }));
    const seen = new Set(periodList.map((c) => c.id));
    const rest = inPeriod.filter((e) => !seen.has(e.id)).sort((a, b) => b.importance - a.importance || b.created_at.localeCompare(a.created_at));
    for (const e of rest.slice(0, Math.max(0, k - periodList.length))) periodList.push(entryCandidate(e));
    return { text: hits.map(({ entry, bm25 }) => ({ ...entryCandidate(entry), bm25: round(bm25) })), period: periodList };
  }

  /**
   * Neighbours that complete a hit: a question the assistant asked and the user's answer are one piece
   * of context, and often only one of the two shares words with the query ("Which dentist do you go
   * to?" / "dr okafor"). So a hit that is the assistant's question brings the user's next turn, and a
   * user turn answering the assistant's question brings that question. Best effort: a failing lookup
   * adds no context and never fails the pass.
   */
  private async context(req: RetrieveRequest, hits: readonly Scored[]): Promise<Array<{ parent: Scored; turn: Candidate }>> {
    const out: Array<{ parent: Scored; turn: Candidate }> = [];
    try {
      for (const hit of hits) {
        const h = hit.candidate;
        if (h.kind !== 'turn' || (h.role !== 'assistant' && h.role !== 'user')) continue;
        const around = await this.deps.context!.neighbours(h.user_id, h.id, 1, 1);
        if (!around) continue;
        const pair = h.role === 'assistant' ? around.after[0] : around.before[0];
        if (!pair || pair.user_id !== req.user_id) continue;
        const question = h.role === 'assistant' ? h : pair;
        const answer = h.role === 'assistant' ? pair : h;
        if (question.role === 'assistant' && answer.role === 'user' && isQuestion(question.content)) out.push({ parent: hit, turn: turnCandidate(pair) });
      }
    } catch (err) {
      warnOnce(this.deps.log, 'context-failed', { err: (err as Error).message }, 'neighbouring turns could not be read; results carry no context');
    }
    return out;
  }
}

/** A turn that asks something, wherever its question mark sits ("Which dentist? I can book it."). */
function isQuestion(text: string): boolean {
  return text.includes('?');
}

function entryCandidate(e: MemoryEntry): Candidate {
  return {
    id: e.id,
    user_id: e.user_id,
    session_id: e.session_id,
    role: e.role,
    name: e.name,
    kind: e.kind,
    content: e.content,
    content_hash: e.content_hash,
    created_at: e.created_at,
    importance: e.importance,
  };
}

function turnCandidate(t: Turn): Candidate {
  return {
    id: t.id,
    user_id: t.user_id,
    session_id: t.session_id,
    role: t.role,
    name: t.name,
    kind: (t.metadata?.kind as Candidate['kind'] | undefined) ?? 'turn',
    content: t.content,
    content_hash: t.content_hash,
    created_at: t.created_at,
    importance: t.importance,
  };
}

function report(backend: string, status: TierStatus, ms: number, count: number, error?: string): TierReport {
  const r: TierReport = { backend, status, ms: Math.round(ms * 100) / 100, count };
  if (error) r.error = error;
  return r;
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
