import { z } from 'zod';
import { DEFAULT_USER, SessionIdSchema, UserIdSchema } from '../domain/turn.js';

/** The body of one chat turn (POST /chat, `neuralcleave chat`, the typed client's `chat`). */
export function chatRequestSchema(maxMessageChars: number) {
  return z.strictObject({
    session_id: SessionIdSchema,
    message: z.string().max(maxMessageChars).refine((s) => s.trim().length > 0, 'must not be empty or blank'),
    user_id: UserIdSchema.default(DEFAULT_USER),
  });
}
export type ChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;
export type ChatRequestInput = z.input<ReturnType<typeof chatRequestSchema>>;
