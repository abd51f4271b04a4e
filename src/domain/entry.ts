import { z } from 'zod';
import { RoleSchema } from './turn.js';

export const KINDS = ['turn', 'summary', 'archive'] as const;
export const KindSchema = z.enum(KINDS);
export type Kind = z.infer<typeof KindSchema>;

/** A long-term memory entry (SPEC §2). */
export const MemoryEntrySchema = z.object({
  id: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  role: RoleSchema,
  name: z.string().nullable(),
  kind: KindSchema,
  content: z.string(),
  content_hash: z.string(),
  importance: z.number(),
  pinned: z.boolean(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  /** for summaries and archives: the turn ids they replace */
  covers: z.array(z.string()).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

export const TIERS = ['short_term', 'semantic', 'long_term'] as const;
export const TierSchema = z.enum(TIERS);
export type Tier = z.infer<typeof TierSchema>;

/** The parts of a result's score, so a user can see why it was retrieved. */
export const ExplainSchema = z.object({
  /** cosine similarity of the query and the memory, when the semantic tier found it */
  similarity: z.number().nullable(),
  /** BM25 relevance (higher is better), when the long-term tier found it */
  bm25: z.number().nullable(),
  /** rank of this memory in each tier that found it (1 = best) */
  ranks: z.partialRecord(TierSchema, z.number().int().positive()),
  /** reciprocal-rank-fusion part of the score */
  fusion: z.number(),
  tier_priority: z.number(),
  recency: z.number(),
  importance: z.number(),
});
export type Explain = z.infer<typeof ExplainSchema>;

export const RetrievalResultSchema = z.object({
  id: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  role: RoleSchema,
  name: z.string().nullable(),
  kind: KindSchema,
  content: z.string(),
  tier: TierSchema,
  score: z.number(),
  created_at: z.string(),
  explain: ExplainSchema,
});
export type RetrievalResult = z.infer<typeof RetrievalResultSchema>;
