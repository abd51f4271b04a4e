import { z } from 'zod';
import { RetrieveFiltersSchema } from '../domain/filters.js';
import { DEFAULT_USER, SessionIdSchema, UserIdSchema, wellFormed } from '../domain/turn.js';

export const MAX_TOP_K = 100;
export const MAX_QUERY_CHARS = 4000;
export const DEFAULT_TOP_K = 8;

export const RetrieveRequestSchema = z.strictObject({
  query: wellFormed(z.string().trim().min(1, 'must not be empty').max(MAX_QUERY_CHARS)),
  user_id: UserIdSchema.default(DEFAULT_USER),
  session_id: SessionIdSchema.optional(),
  top_k: z.number().int().min(1).max(MAX_TOP_K).default(DEFAULT_TOP_K),
  /**
   * Results scoring below it are dropped (fewer than top_k may come back). The score lies in [0, 1]:
   * 0.70 × relevance (1 = first in every ranked list that answered) plus at most 0.12 of priors (tier,
   * recency, importance) and 0.20 when the memory lies in a period the query names. See the README.
   */
  min_score: z.number().min(0).max(1).optional(),
  /** only memories matching these conditions, applied by every tier before it ranks (src/domain/filters.ts) */
  filters: RetrieveFiltersSchema.optional(),
});
export type RetrieveRequest = z.infer<typeof RetrieveRequestSchema>;
export type RetrieveRequestInput = z.input<typeof RetrieveRequestSchema>;
