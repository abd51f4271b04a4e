import { z } from 'zod';
import { scoreImportance } from './importance.js';
import { KindSchema, MemoryRecordSchema } from './record.js';
import type { Turn } from './turn.js';

export { KINDS, KindSchema, type Kind } from './record.js';

/** A long-term memory entry (docs/architecture.md, records). */
export const MemoryEntrySchema = MemoryRecordSchema.extend({
  kind: KindSchema,
  importance: z.number(),
  pinned: z.boolean(),
  /** for summaries and archives: the turn ids they replace */
  covers: z.array(z.string()).nullable(),
  updated_at: z.string(),
});
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

/**
 * A logged turn as the long-term entry the persist job writes of it: its own importance, else the
 * score the job gives it (`importance`, when the caller scored it already).
 */
export function entryOfTurn(turn: Turn, importance = turn.importance ?? scoreImportance(turn.content, turn.role)): MemoryEntry {
  return {
    id: turn.id,
    user_id: turn.user_id,
    session_id: turn.session_id,
    role: turn.role,
    name: turn.name,
    kind: 'turn',
    content: turn.content,
    content_hash: turn.content_hash,
    importance,
    pinned: turn.pinned,
    metadata: turn.metadata,
    covers: null,
    created_at: turn.created_at,
    updated_at: turn.created_at,
  };
}

export const TIERS = ['short_term', 'semantic', 'long_term'] as const;
export const TierSchema = z.enum(TIERS);
export type Tier = z.infer<typeof TierSchema>;

/**
 * The parts of a result's score, so a user can see why it was retrieved (the formula is in
 * src/retrieval/rank.ts and the README):
 * score = 0.70·relevance + 0.20·in_period + 0.04·tier_priority + 0.02·recency + 0.06·importance.
 */
export const ExplainSchema = z.object({
  /** cosine similarity of the query and the memory, when the semantic tier found it */
  similarity: z.number().nullable(),
  /** BM25 relevance (higher is better), when the long-term tier found it */
  bm25: z.number().nullable(),
  /** rank of this memory in each tier that found it (1 = best) */
  ranks: z.partialRecord(TierSchema, z.number().int().positive()),
  /** rank among the long-term entries of the period the query names ("last May"), when it names one */
  period_rank: z.number().int().positive().nullable(),
  /** rank among the candidates ordered by how many of the query's words they hold (null: none) */
  overlap_rank: z.number().int().positive().nullable(),
  /** reciprocal rank fusion of the ranks above, scaled to [0, 1] */
  fusion: z.number(),
  /** when this turn was added as context of a hit (the question before an answer, the answer after a question): that hit's id */
  context_of: z.string().nullable(),
  /**
   * the relevance part: fusion, or for context a share of its hit's relevance when that is higher;
   * halved when the query names a participant and someone else said it, × 0.7 for a turn that only asks
   */
  relevance: z.number(),
  /** whether the memory was created in the period the query names; null when it names none */
  in_period: z.boolean().nullable(),
  tier_priority: z.number(),
  recency: z.number(),
  importance: z.number(),
  /** a newer statement by the same speaker on the same subject, which this one is ranked below */
  superseded_by: z.string().nullable(),
  /** when that newer statement was made */
  superseded_at: z.string().nullable(),
});
export type Explain = z.infer<typeof ExplainSchema>;

/** the part of a long turn that matched the query: `content.slice(start, end)` (retrieval/passage.ts) */
export const PassageSchema = z.object({ start: z.number().int().nonnegative(), end: z.number().int().nonnegative(), text: z.string() });
export type Passage = z.infer<typeof PassageSchema>;

export const RetrievalResultSchema = MemoryRecordSchema.omit({ content_hash: true }).extend({
  kind: KindSchema,
  tier: TierSchema,
  score: z.number(),
  /** a memory longer than 1,000 characters: its best-matching window of at most 600; prompt blocks quote it instead of the whole turn */
  passage: PassageSchema.optional(),
  explain: ExplainSchema,
});
export type RetrievalResult = z.infer<typeof RetrievalResultSchema>;
