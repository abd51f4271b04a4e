import { z } from 'zod';

export const ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export const RoleSchema = z.enum(ROLES);
export type Role = z.infer<typeof RoleSchema>;

/** a memory's id: a client's idempotency key or a generated UUID; safe in paths, keys and logs */
export const MemoryIdSchema = z.string().min(1).max(128).regex(/^[\w.:@-]+$/, 'may hold only letters, digits and . _ : @ -');
export const DEFAULT_USER = 'default';
/** most turns one write may carry (HTTP, library, MCP) */
export const MAX_TURNS_PER_WRITE = 1000;
const METADATA_MAX_BYTES = 8 * 1024;

const utf8 = new TextEncoder();

/**
 * A value too deeply nested to serialize (stack overflow) counts as too large, never as a crash.
 * TextEncoder rather than Buffer: these schemas are also the typed client's, which runs in browsers.
 */
function serializedBytes(v: unknown): number {
  try {
    return utf8.encode(JSON.stringify(v)).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Lone UTF-16 surrogates cannot be stored as UTF-8 text without silently changing it. */
// eslint-disable-next-line no-control-regex
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * Text that is stored, keyed or searched as it was sent: no unpaired surrogate (SQLite and Redis
 * would store U+FFFD instead, so the owner or session written would not be the one given) and no
 * control character but tab, newline and carriage return.
 */
export const wellFormed = (s: z.ZodString) =>
  s.refine((v) => !LONE_SURROGATE.test(v), 'contains an unpaired UTF-16 surrogate').refine((v) => !FORBIDDEN_CONTROL.test(v), 'contains a control character');

const text = (max: number) => wellFormed(z.string().max(max));

export const UserIdSchema = wellFormed(z.string().min(1).max(128));
export const SessionIdSchema = wellFormed(z.string().min(1).max(128));

/**
 * The schema of one turn as every write path accepts it (SPEC §2). `maxTurnChars` comes from config,
 * so the schema is built once at wiring time.
 */
export function turnInputSchema(maxTurnChars: number) {
  return z.strictObject({
    user_id: UserIdSchema.default(DEFAULT_USER),
    session_id: SessionIdSchema,
    role: RoleSchema,
    name: text(128).optional(),
    content: text(maxTurnChars).refine((s) => s.trim().length > 0, 'must not be empty or blank'),
    id: MemoryIdSchema.optional(),
    created_at: z.iso.datetime({ offset: true }).optional(),
    importance: z.number().min(0).max(1).optional(),
    pinned: z.boolean().default(false),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((m) => serializedBytes(m) <= METADATA_MAX_BYTES, `must be at most ${METADATA_MAX_BYTES} bytes serialized`)
      .optional(),
  });
}
export type TurnInputSchema = ReturnType<typeof turnInputSchema>;
/** What a caller sends (defaults optional). */
export type TurnInput = z.input<TurnInputSchema>;

/** A turn after validation and normalization: every field the stores need. */
export const TurnSchema = z.object({
  id: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  role: RoleSchema,
  name: z.string().nullable(),
  content: z.string(),
  content_hash: z.string(),
  created_at: z.string(),
  importance: z.number().nullable(),
  pinned: z.boolean(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
});
export type Turn = z.infer<typeof TurnSchema>;
