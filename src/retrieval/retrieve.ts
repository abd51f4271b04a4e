import type { RetrievalResult, Tier } from '../domain/entry.js';
import type { Turn } from '../domain/turn.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import { warnOnce, type Logger } from '../logger.js';
import type { LongTermStore } from '../tiers/long-term.js';
import type { ShortTermStore } from '../tiers/short-term.js';
import type { VectorIndex } from '../tiers/vector-index.js';
import { withBudget, type TierStatus } from './budget.js';
import { formatPromptBlocks } from './prompt-blocks.js';
import { queryTerms, words } from './query-terms.js';
import { fuse, type Candidate } from './rank.js';
import type { RetrieveRequest } from './request.js';

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

export interface RetrieverDeps {
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  longTerm: LongTermStore;
  embedders: EmbedderProvider;
  log: Logger;
  budgets: Record<Tier, number>;
  /** called once per tier per call with its outcome (metrics) */
  onTier?: (tier: Tier, report: TierReport) => void;
}

/** how many candidates each tier contributes, relative to top_k, before fusion */
const CANDIDATES_PER_RESULT = 3;
/** the newest turns of the session are always candidates, relevant to the query or not */
const ALWAYS_RECENT = 2;

/**
 * The one retrieval pass (SPEC §4): the three tiers are read concurrently, each under its own time
 * budget, then fused, deduplicated and cut to top_k. Never waits for a queue.
 */
export class Retriever {
  constructor(private readonly deps: RetrieverDeps) {}

  async retrieve(req: RetrieveRequest, now = Date.now()): Promise<RetrieveResponse> {
    const { deps } = this;
    const pool = req.top_k * CANDIDATES_PER_RESULT;
    const [st, sem, lt] = await Promise.all([
      withBudget(() => this.shortTerm(req), deps.budgets.short_term, [] as Candidate[]),
      withBudget(() => this.semantic(req, pool), deps.budgets.semantic, null as Candidate[] | null),
      withBudget(() => this.longTerm(req, pool), deps.budgets.long_term, [] as Candidate[]),
    ]);
    const semStatus: TierStatus = sem.status === 'ok' && sem.value === null ? 'skipped' : sem.status;
    const tiers: Record<Tier, TierReport> = {
      short_term: report(deps.shortTerm.backend, st.status, st.ms, st.value.length, st.error),
      semantic: report(deps.vectors.backend, semStatus, sem.ms, sem.value?.length ?? 0, sem.error),
      long_term: report('sqlite', lt.status, lt.ms, lt.value.length, lt.error),
    };
    for (const [tier, r] of Object.entries(tiers) as Array<[Tier, TierReport]>) {
      if (r.status === 'timeout' || r.status === 'error') deps.log.warn({ tier, ...r }, 'tier skipped for this retrieval');
      deps.onTier?.(tier, r);
    }
    const results = fuse({ short_term: st.value, semantic: sem.value ?? [], long_term: lt.value }, { topK: req.top_k, now });
    return { results, prompt_blocks: formatPromptBlocks(results), tiers };
  }

  /** The session's recent turns, those sharing words with the query first, then the newest. */
  private async shortTerm(req: RetrieveRequest): Promise<Candidate[]> {
    if (req.session_id === undefined) return [];
    const turns = await this.deps.shortTerm.recent(req.user_id, req.session_id);
    const terms = new Set(queryTerms(req.query));
    const scored = turns.map((t, i) => {
      const ws = new Set(words(t.content + ' ' + (t.name ?? '')));
      let overlap = 0;
      for (const term of terms) if (ws.has(term)) overlap++;
      return { t, overlap, newest: i >= turns.length - ALWAYS_RECENT };
    });
    return scored
      .filter((s) => s.overlap > 0 || s.newest)
      .sort((a, b) => b.overlap - a.overlap || b.t.created_at.localeCompare(a.t.created_at))
      .map((s) => turnCandidate(s.t));
  }

  private async semantic(req: RetrieveRequest, k: number): Promise<Candidate[] | null> {
    const embedder = this.deps.embedders.current();
    if (!embedder) {
      warnOnce(this.deps.log, 'semantic-skipped', { model: this.deps.embedders.model, status: this.deps.embedders.status }, 'no embedder loaded; the semantic tier is skipped');
      return null;
    }
    const [query] = await embedder.embed([req.query]);
    // every session of the user: a new session must find what was said in earlier ones
    const hits = await this.deps.vectors.search(embedder, query!, { user_id: req.user_id }, k);
    return hits
      .filter((h) => h.score > 0)
      .map((h) => ({ id: h.id, ...h.payload, importance: null, similarity: round(h.score) }));
  }

  private async longTerm(req: RetrieveRequest, k: number): Promise<Candidate[]> {
    const hits = await this.deps.longTerm.searchText(req.user_id, req.query, { limit: k });
    return hits.map(({ entry: e, bm25 }) => ({
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
      bm25: round(bm25),
    }));
  }
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
