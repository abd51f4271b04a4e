import { z } from 'zod';
import { QUEUE_NAMES } from '../../queues/names.js';
import { InspectedEntrySchema, SessionSummarySchema, UserSummarySchema } from '../domain/inspection.js';
import { SessionIdSchema, UserIdSchema } from '../domain/turn.js';

/*
 * The inspector routes' shapes, apart from the routes: like src/api/schemas.ts, this module and its
 * imports hold no server code, so the web page's types are read from here.
 */

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 200;
export const DEFAULT_JOBS = 50;

/** A query-string integer: digits only, then bounded (as on the /memory list routes). */
const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const limit = (max: number, def: number) => queryInt(1, max).optional().describe(`how many, 1–${max} (default ${def})`);
const userQuery = UserIdSchema.optional().describe('whose; default: the key\'s only user, else "default"');

/** Request and response shapes of the inspector's routes; /openapi.json is generated from them. */
export function inspectSchemas() {
  return {
    UsersQuery: z.strictObject({ limit: limit(MAX_LIMIT, DEFAULT_LIMIT) }),
    SessionsQuery: z.strictObject({ user_id: userQuery, limit: limit(MAX_LIMIT, DEFAULT_LIMIT) }),
    SessionParams: z.strictObject({ session_id: SessionIdSchema }),
    SessionEntriesQuery: z.strictObject({ user_id: userQuery, limit: limit(MAX_LIMIT, DEFAULT_LIMIT) }),
    FailedJobsQuery: z.strictObject({ queue: z.enum(QUEUE_NAMES).optional().describe('only this queue'), limit: limit(MAX_LIMIT, DEFAULT_JOBS).describe('per queue') }),

    WhoAmIResponse: z.object({
      admin: z.boolean().describe('an admin key (users ["*"]), or no api_keys configured'),
      keys_enabled: z.boolean(),
      users: z.array(z.string()).nullable().describe("the key's users; null for all"),
      default_user: z.string().describe('the user a request acts for when it names none'),
      queue_backend: z.enum(['bullmq', 'in-process']),
      queue_board: z.string().nullable().describe('path of the queue dashboard when this key may open it'),
    }),
    UsersResponse: z.object({ users: z.array(UserSummarySchema), all: z.boolean().describe('every user is listed (admin), not only the key\'s') }),
    SessionsResponse: z.object({ user_id: z.string(), sessions: z.array(SessionSummarySchema) }),
    SessionEntriesResponse: z.object({ user_id: z.string(), session_id: z.string(), entries: z.array(InspectedEntrySchema) }),
    FailedJobsResponse: z.object({
      queue_backend: z.enum(['bullmq', 'in-process']),
      jobs: z.array(
        z.object({
          queue: z.enum(QUEUE_NAMES),
          jobId: z.string(),
          attempts: z.number().int(),
          reason: z.string(),
          failedAt: z.string().nullable(),
          data: z.unknown(),
          user_id: z.string().nullable(),
        }),
      ),
    }),
    BoardSessionResponse: z.object({ path: z.string().describe('open this path in the browser') }),
  };
}
export type InspectSchemas = ReturnType<typeof inspectSchemas>;
