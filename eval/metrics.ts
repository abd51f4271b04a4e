// Retrieval metrics over ranked id lists: Recall@k, Hit@k, reciprocal rank, and whether a newer
// statement outranks the one it supersedes. Pure functions; no I/O.

export const KS = [1, 5, 8, 10, 20] as const;
export type K = (typeof KS)[number];

export interface QuestionScore {
  /** share of the evidence turns found in the first k results */
  recall: Record<K, number>;
  /** 1 when at least one evidence turn is in the first k results */
  hit: Record<K, number>;
  /** 1 / rank of the first evidence turn, 0 when none was returned */
  rr: number;
  /** for questions with stale turns: 1 when the best evidence ranks above every stale turn, else 0 */
  newerFirst: number | null;
}

export interface Summary {
  n: number;
  recall: Record<K, number>;
  hit: Record<K, number>;
  mrr: number;
  /** share of update questions where the newer statement ranks above the old one (null: none) */
  newer_first: number | null;
}

/** Scores one ranked list (best first) against the evidence ids; `stale` are superseded ids. */
export function scoreRanking(ranked: readonly string[], evidence: readonly string[], stale: readonly string[] = []): QuestionScore {
  if (evidence.length === 0) throw new Error('a question needs at least one evidence id');
  const want = new Set(evidence);
  const position = new Map<string, number>();
  ranked.forEach((id, i) => {
    if (!position.has(id)) position.set(id, i + 1);
  });
  const ranks = [...want].map((id) => position.get(id)).filter((r): r is number => r !== undefined);
  const first = ranks.length > 0 ? Math.min(...ranks) : null;
  const recall = {} as Record<K, number>;
  const hit = {} as Record<K, number>;
  for (const k of KS) {
    const found = ranks.filter((r) => r <= k).length;
    recall[k] = found / want.size;
    hit[k] = found > 0 ? 1 : 0;
  }
  let newerFirst: number | null = null;
  if (stale.length > 0) {
    const staleRanks = stale.map((id) => position.get(id)).filter((r): r is number => r !== undefined);
    newerFirst = first !== null && staleRanks.every((r) => r > first) ? 1 : 0;
  }
  return { recall, hit, rr: first === null ? 0 : 1 / first, newerFirst };
}

/** Means over questions; an empty list summarizes to zeros with n = 0. */
export function summarize(scores: readonly QuestionScore[]): Summary {
  const n = scores.length;
  const mean = (f: (s: QuestionScore) => number) => (n === 0 ? 0 : round(scores.reduce((a, s) => a + f(s), 0) / n));
  const recall = {} as Record<K, number>;
  const hit = {} as Record<K, number>;
  for (const k of KS) {
    recall[k] = mean((s) => s.recall[k]);
    hit[k] = mean((s) => s.hit[k]);
  }
  const withStale = scores.filter((s) => s.newerFirst !== null);
  const newer_first = withStale.length === 0 ? null : round(withStale.reduce((a, s) => a + s.newerFirst!, 0) / withStale.length);
  return { n, recall, hit, mrr: mean((s) => s.rr), newer_first };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
