import { z } from 'zod';
import type { Config } from '../config/schema.js';
import { MemoryEntrySchema, RetrievalResultSchema, TIERS } from '../domain/entry.js';
import { chatRequestSchema } from '../chat/request.js';
import { MAX_TURNS_PER_WRITE, SessionIdSchema, StoredIdSchema, UserIdSchema, turnInputSchema } from '../domain/turn.js';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';
import { MAX_QUERY_CHARS, RetrieveRequestSchema } from '../retrieval/request.js';

/** bounds of `limit` on the list routes */
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 20;
/** a prune criterion beyond a century is a typo, not a policy */
const MAX_AGE_DAYS = 36_500;

/** A query-string integer: digits only (no "1e3", no "0x10"), then bounded. */
const queryInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CATALOG) as [ErrorCode, ...ErrorCode[]]);

/**
 * Every request and response shape of the HTTP API. Routes and MCP tools validate with these,
 * /openapi.json is generated from them and the typed client (src/client/) takes its types from them, so
 * none can drift from what the server accepts. Built once per app, because the content cap comes from
 * config. This module and its imports hold no server code: the client's types are read from here.
 */
export function apiSchemas(config: Pick<Config, 'max_turn_chars'>) {
  const turn = turnInputSchema(config.max_turn_chars);
  /** a turn posted under a session path: `session_id` may be left out (the path gives it) */
  const turnInSession = turn.extend({ session_id: SessionIdSchema.optional() });

  const listQuery = {
    user_id: UserIdSchema.optional().describe('whose memories; default: the key\'s only user, else "default"'),
    session_id: SessionIdSchema.optional().describe('only this session'),
    limit: queryInt(1, MAX_LIMIT).optional().describe(`how many, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
  };

  return {
    SessionParams: z.strictObject({ session_id: SessionIdSchema }),
    TurnInSession: turnInSession,
    MemoryIdParams: z.strictObject({ id: StoredIdSchema }),
    MemoryIdQuery: z.strictObject({ user_id: listQuery.user_id }),

    /** the envelope of a batch; each turn is then validated by the write path */
    TurnBatchEnvelope: z.strictObject({
      user_id: UserIdSchema.optional(),
      turns: z.array(z.unknown()).min(1, 'must hold at least one turn').max(MAX_TURNS_PER_WRITE),
    }),
    /** documented body of POST /sessions/:session_id/turns; a batch's `user_id` is every turn's that names none (as MCP add_turns) */
    AddTurnsBody: z.union([
      turnInSession,
      z.strictObject({
        user_id: UserIdSchema.optional().describe("the user of every turn that names none (default: the key's only user, else \"default\")"),
        turns: z.array(turnInSession).min(1).max(MAX_TURNS_PER_WRITE),
      }),
    ]),
    AddTurnsResponse: z.object({
      ids: z.array(z.string()).describe('the id of every turn sent, in order'),
      accepted: z.number().int().describe('turns stored now'),
      duplicates: z.number().int().describe('turns re-sent unchanged under an id the user already holds (stored once)'),
    }),

    SearchQuery: z.strictObject({ q: z.string().min(1, 'must not be empty').max(MAX_QUERY_CHARS).describe('substring; % _ \\ match literally'), ...listQuery }),
    RecentQuery: z.strictObject(listQuery),
    EntriesResponse: z.object({ entries: z.array(MemoryEntrySchema) }),
    EntryResponse: MemoryEntrySchema,

    PatchBody: z
      .strictObject({
        content: turn.shape.content.optional(),
        importance: z.number().min(0).max(1).optional(),
        pinned: z.boolean().optional(),
      })
      .refine((p) => p.content !== undefined || p.importance !== undefined || p.pinned !== undefined, {
        message: 'give at least one of content, importance, pinned',
      }),

    DeleteResponse: z.object({
      id: z.string(),
      removed: z.object({ long_term: z.boolean(), turn_log: z.boolean(), short_term: z.boolean(), semantic: z.boolean() }),
    }),

    PruneBody: z
      .strictObject({
        user_id: UserIdSchema.optional(),
        session_id: SessionIdSchema.optional(),
        older_than_days: z.number().positive().max(MAX_AGE_DAYS).optional(),
        below_importance: z.number().min(0).max(1).optional(),
      })
      .refine((p) => p.older_than_days !== undefined || p.below_importance !== undefined || p.session_id !== undefined, {
        message: 'give at least one criterion: older_than_days, below_importance or session_id',
      }),
    PruneResponse: z.object({ deleted: z.number().int(), ids: z.array(z.string()) }),

    RetrieveBody: RetrieveRequestSchema,
    RetrieveResponse: z.object({
      results: z.array(RetrievalResultSchema),
      prompt_blocks: z.string(),
      tiers: z.record(
        z.enum(TIERS),
        z.object({ backend: z.string(), status: z.enum(['ok', 'timeout', 'error', 'skipped']), ms: z.number(), count: z.number().int(), error: z.string().optional() }),
      ),
    }),

    ChatBody: chatRequestSchema(config.max_turn_chars),
    ChatResponse: z.object({
      reply: z.string(),
      user_id: z.string(),
      session_id: z.string(),
      turn_ids: z.object({ user: z.string(), assistant: z.string() }).describe('the two turns written: the message, then the reply'),
      provider: z.enum(['ollama', 'openai']),
      model: z.string(),
      usage: z.object({ prompt_tokens: z.number().nullable(), completion_tokens: z.number().nullable() }),
      memories: z.array(RetrievalResultSchema).describe('what retrieval found for the message, each with `explain`'),
      prompt_blocks: z.string().describe('the memory text the LLM was given'),
    }),

    HealthResponse: z.looseObject({
      status: z.enum(['ok', 'degraded', 'down']),
      problems: z.array(z.object({ part: z.string(), state: z.string(), advice: z.string() })).describe('each part not ok: what it means and what to do'),
      backends: z.record(z.string(), z.object({ backend: z.string(), state: z.string(), detail: z.string().optional() })),
      embedder: z.object({
        model: z.string(),
        status: z.string().describe('loading, ready or failed'),
        id: z.string().nullable().describe('the loaded embedder (model and dimension); null while none is'),
        dim: z.number().int().nullable(),
        error: z.string().optional().describe('why it failed to load (with a key, or none configured)'),
      }),
      queues: z.record(z.string(), z.object({ waiting: z.number(), active: z.number(), delayed: z.number(), failed: z.number(), completed: z.number() })),
      sqlite_path: z.string().optional().describe('the SQLite file, when it is the durable store (with a key, or none configured)'),
      database_url: z.string().optional().describe('the PostgreSQL database, when it is the durable store, its password masked (with a key, or none configured)'),
      turn_log: z
        .object({ total: z.number().int(), pending_embed: z.number().int(), pending_persist: z.number().int() })
        .optional()
        .describe('turns in the turn log and those with a job still to run (with a key, or none configured)'),
    }),

    ErrorResponse: z.object({
      error: z.object({
        code: ErrorCodeSchema,
        message: z.string(),
        details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      }),
    }),
  };
}

export type ApiSchemas = ReturnType<typeof apiSchemas>;
