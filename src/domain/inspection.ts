import { z } from 'zod';
import { MemoryEntrySchema } from './entry.js';

/*
 * The records of the memory inspector (the web page and its /inspect routes), with no server code
 * around them, so the page's types are read from them at build time (web/src/types.ts).
 */

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

/** Where one memory of a session is held, and what is still to be done with it. */
export const InspectedEntrySchema = MemoryEntrySchema.pick({
  id: true,
  user_id: true,
  session_id: true,
  role: true,
  name: true,
  kind: true,
  content: true,
  pinned: true,
  created_at: true,
}).extend({
  importance: z.number().nullable().describe("the long-term entry's, else the turn's own; null while not yet scored"),
  updated_at: z.string().nullable().describe('set for long-term entries'),
  tiers: z.object({
    turn_log: z.boolean(),
    short_term: z.boolean(),
    semantic: z.boolean().nullable().describe('null when no embedder is loaded, so it cannot be told'),
    long_term: z.boolean(),
  }),
  pending: z.object({ embed: z.boolean(), persist: z.boolean() }).describe('write-path jobs not completed yet (turn-log turns only)'),
});
export type InspectedEntry = z.infer<typeof InspectedEntrySchema>;
