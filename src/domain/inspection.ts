import { z } from 'zod';

/** One user's counts, as the memory inspector lists users. */
export const UserSummarySchema = z.object({
  user_id: z.string(),
  sessions: z.number().int().describe('distinct sessions in the turn log and the long-term store'),
  turns: z.number().int().describe('turns in the turn log'),
  entries: z.number().int().describe('long-term entries (turns, summaries, archives)'),
  last_at: z.string().nullable().describe('newest created_at of any turn or entry; null when nothing is stored'),
});
export type UserSummary = z.infer<typeof UserSummarySchema>;

/** One session of a user, as the memory inspector lists sessions. */
export const SessionSummarySchema = z.object({
  session_id: z.string(),
  turns: z.number().int(),
  entries: z.number().int(),
  first_at: z.string(),
  last_at: z.string(),
  live: z.boolean().describe('the short-term tier holds the session now (it has not expired)'),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** What the durable store counts of a session (whether it is live is the short-term tier's to say). */
export type SessionStats = Omit<SessionSummary, 'live'>;
