import type { Explain, Kind, RetrievalResult, Tier } from '../domain/entry.js';
import type { Role } from '../domain/turn.js';

/** One memory as a tier found it, before fusion. */
export interface Candidate {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  kind: Kind;
  content: string;
  content_hash: string;
  created_at: string;
  importance: number | null;
  similarity?: number;
  bm25?: number;
}

/** Reciprocal-rank-fusion constant: the usual 60 keeps one tier's first place from drowning the rest. */
export const RRF_K = 60;
export const TIER_PRIORITY: Record<Tier, number> = { short_term: 1, long_term: 0.5, semantic: 0.5 };
/** tier order for deduplication: a memory held by several tiers is reported under the first */
const TIER_ORDER: Tier[] = ['short_term', 'long_term', 'semantic'];
export const WEIGHTS = { fusion: 0.7, tier_priority: 0.1, recency: 0.1, importance: 0.1 } as const;
export const RECENCY_HALF_LIFE_DAYS = 30;

export interface RankOptions {
  topK: number;
  now: number;
}

/**
 * Fuses the tiers' ranked lists into one ranking (SPEC §4). A memory's score is
 *
 *   0.7 · fusion + 0.1 · tier_priority + 0.1 · recency + 0.1 · importance
 *
 * where fusion is reciprocal rank fusion, Σ over the tiers that found it of 1/(60 + rank), divided by
 * its largest possible value so it lies in [0, 1] — it uses ranks, not raw scores, so cosine and BM25
 * scales never have to be reconciled; tier_priority is 1 for the session's short-term turns and 0.5
 * otherwise; recency halves every 30 days; importance is the stored or scored importance (0.5 when
 * unknown). Memories are deduplicated by content hash first.
 */
export function fuse(lists: Partial<Record<Tier, Candidate[]>>, o: RankOptions): RetrievalResult[] {
  const merged = new Map<string, { c: Candidate; tier: Tier; ranks: Partial<Record<Tier, number>>; similarity: number | null; bm25: number | null }>();
  for (const tier of TIER_ORDER) {
    (lists[tier] ?? []).forEach((c, i) => {
      const m = merged.get(c.content_hash);
      if (!m) {
        merged.set(c.content_hash, { c, tier, ranks: { [tier]: i + 1 }, similarity: c.similarity ?? null, bm25: c.bm25 ?? null });
        return;
      }
      if (m.ranks[tier] === undefined) m.ranks[tier] = i + 1;
      if (c.similarity !== undefined) m.similarity = Math.max(m.similarity ?? -1, c.similarity);
      if (c.bm25 !== undefined) m.bm25 = Math.max(m.bm25 ?? 0, c.bm25);
      if (m.c.importance === null && c.importance !== null) m.c = { ...m.c, importance: c.importance };
    });
  }
  const tiersPresent = TIER_ORDER.filter((t) => (lists[t]?.length ?? 0) > 0).length || 1;
  const fusionMax = tiersPresent / (RRF_K + 1);
  const results: RetrievalResult[] = [];
  for (const { c, tier, ranks, similarity, bm25 } of merged.values()) {
    let rrf = 0;
    for (const r of Object.values(ranks)) rrf += 1 / (RRF_K + r);
    const fusion = rrf / fusionMax;
    const ageDays = Math.max(0, (o.now - Date.parse(c.created_at)) / 86_400_000);
    const recency = Math.pow(0.5, ageDays / RECENCY_HALF_LIFE_DAYS);
    const importance = c.importance ?? 0.5;
    const tierPriority = TIER_PRIORITY[tier];
    const score =
      WEIGHTS.fusion * fusion + WEIGHTS.tier_priority * tierPriority + WEIGHTS.recency * recency + WEIGHTS.importance * importance;
    const explain: Explain = {
      similarity,
      bm25,
      ranks,
      fusion: round(fusion),
      tier_priority: tierPriority,
      recency: round(recency),
      importance: round(importance),
    };
    results.push({
      id: c.id,
      user_id: c.user_id,
      session_id: c.session_id,
      role: c.role,
      name: c.name,
      kind: c.kind,
      content: c.content,
      tier,
      score: round(score),
      created_at: c.created_at,
      explain,
    });
  }
  return results.sort((a, b) => b.score - a.score || b.created_at.localeCompare(a.created_at)).slice(0, o.topK);
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
