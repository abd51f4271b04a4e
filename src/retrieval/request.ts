import { z } from 'zod';
import { DEFAULT_USER, SessionIdSchema, UserIdSchema, wellFormed } from '../domain/turn.js';

export const MAX_TOP_K = 100;
export const MAX_QUERY_CHARS = 4000;

export const RetrieveRequestSchema = z.strictObject({
  query: wellFormed(z.string().trim().min(1, 'must not be empty').max(MAX_QUERY_CHARS)),
  user_id: UserIdSchema.default(DEFAULT_USER),
  session_id: SessionIdSchema.optional(),
  top_k: z.number().int().min(1).max(MAX_TOP_K).default(8),
});
export type RetrieveRequest = z.infer<typeof RetrieveRequestSchema>;
export type RetrieveRequestInput = z.input<typeof RetrieveRequestSchema>;
