import { z } from 'zod';
import { KindSchema, MemoryRecordSchema, ROLES, RoleSchema } from './record.js';

export { ROLES, RoleSchema, type Role } from './record.js';

/**
 * A turn id a client gives: its idempotency key, scoped to its user (alice's "t-1" and bob's "t-1" are
 * two memories). Safe in paths, keys and logs. It can never hold "~", which marks generated ids.
 */
export const MemoryIdSchema = z.string().min(1).max(128).regex(/^[\w.:@-]+$/, 'may hold only letters, digits and . _ : @ -');
/** Generated ids (summaries, archives): `<kind>~<hash>`, a namespace no client id can enter. */
export const GENERATED_ID_MARK = '~';
export function generatedId(kind: 'summary' | 'archive', hash: string): string {
  return `${kind}${GENERATED_ID_MARK}${hash}`;
}
/** Any stored memory id, as the read, edit and delete routes take it: a client id or a generated one. */
export const StoredIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^(?:[\w.:@-]+|(?:summary|archive)~[\w-]+)$/, 'may hold only letters, digits and . _ : @ - (a generated id: summary~… or archive~…)');
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
  s.refine((v) => !LONE_SURROGATE.test(v), 'contains an unpaired UTF-16 surrogate').superRefine((v, ctx) => {
    // refused by every door alike (HTTP, MCP, the library, ingest, import), never dropped silently: the
    // sender decides what the text should be; the message names the character and where it is
    const at = v.search(FORBIDDEN_CONTROL);
    if (at >= 0) {
      const code = v.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
      ctx.addIssue({ code: 'custom', message: `contains a control character (U+${code} at character ${at + 1}; only tab, newline and carriage return are allowed)` });
    }
  });

const text = (max: number) => wellFormed(z.string().max(max));

/**
 * Where a JSON value holds a key or string that PostgreSQL's jsonb cannot store (U+0000, or an
 * unpaired surrogate, which SQLite would keep): refused for every backend alike, so a turn accepted
 * on one is accepted on the other. Iterative: metadata over its size limit may be nested deeper
 * than the stack.
 */
function unstorableJsonPath(value: unknown): PropertyKey[] | null {
  const bad = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);
  // each node names its parent, so a path is built only for the one found (linear in any depth)
  const nodes: Array<{ v: unknown; parent: number; key: PropertyKey | null }> = [{ v: value, parent: -1, key: null }];
  const pathTo = (i: number, last?: PropertyKey): PropertyKey[] => {
    const path: PropertyKey[] = last === undefined ? [] : [last];
    for (let n = i; n > 0; n = nodes[n]!.parent) path.push(nodes[n]!.key!);
    return path.reverse();
  };
  for (let i = 0; i < nodes.length; i++) {
    const { v } = nodes[i]!;
    if (typeof v === 'string') {
      if (bad(v)) return pathTo(i);
    } else if (Array.isArray(v)) {
      v.forEach((item, k) => nodes.push({ v: item, parent: i, key: k }));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (bad(k)) return pathTo(i, k);
        nodes.push({ v: item, parent: i, key: k });
      }
    }
  }
  return null;
}

// eslint-disable-next-line no-control-regex
const CONTROL_ALL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const LONE_SURROGATE_ALL = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * Text an LLM (or any generator) wrote, made into what a client would have had to send: control
 * characters dropped, broken surrogates replaced by U+FFFD, trimmed, cut to `max` characters, then
 * checked by the same content schema as user input. Throws a ValidationError-shaped error (through
 * `parse`) when nothing storable is left (blank or zero-width only).
 */
export function storableGenerated(raw: string, max: number): string {
  let clean = raw.replace(CONTROL_ALL, '').replace(LONE_SURROGATE_ALL, '\uFFFD').trim();
  // never cut between the halves of a surrogate pair
  if (clean.length > max) clean = `${clean.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
  const checked = contentSchema(max).safeParse(clean);
  if (!checked.success) throw new Error(`generated text is not storable: ${checked.error.issues.map((i) => i.message).join('; ')}`);
  return checked.data;
}

/**
 * Characters that show nothing: whitespace and the default-ignorable ones (zero-width space and
 * joiners, word joiner, BOM, soft hyphen, variation selectors, Hangul fillers). Text made only of them
 * is blank: it would be stored, embedded and retrieved as an empty memory.
 */
const INVISIBLE = /^[\s\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0]*$/u;
export const isBlank = (s: string): boolean => INVISIBLE.test(s);

/** Turn content: well formed, at most `max` characters, not blank. LLM output goes through it too. */
export const contentSchema = (max: number) => text(max).refine((s) => !isBlank(s), 'must not be empty or blank (whitespace and zero-width characters only)');

/**
 * The earliest and latest accepted `created_at`: from the Unix epoch (older dates are typos or
 * placeholders such as year 0000) to one day ahead of this host's clock (clock skew; a date in year
 * 9999 would keep its session from ever being archived).
 */
/** Metadata any durable store can hold (see unstorableJsonPath), of any size: what an import accepts. */
export const StorableMetadataSchema = z.record(z.string(), z.unknown()).superRefine(refuseUnstorable);

function refuseUnstorable(m: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const path = unstorableJsonPath(m);
  if (path) ctx.addIssue({ code: 'custom', path, message: 'holds U+0000 or an unpaired UTF-16 surrogate, which cannot be stored' });
}

export const CREATED_AT_MIN = Date.UTC(1970, 0, 1);
export const CREATED_AT_MAX_AHEAD_MS = 86_400_000;
/** a date and time with no offset: the one mistake worth its own message, since the fix is one character */
const NO_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const createdAtSchema = z.iso
  .datetime({
    offset: true,
    error: (issue) =>
      typeof issue.input === 'string' && NO_OFFSET.test(issue.input)
        ? `has no time zone offset: add Z for UTC (${issue.input}Z) or the offset it was said in (${issue.input}+02:00)`
        : 'must be an ISO 8601 date and time with an offset, like 2024-05-02T18:30:00Z',
  })
  .refine((v) => {
    const t = Date.parse(v);
    return Number.isFinite(t) && t >= CREATED_AT_MIN && t <= Date.now() + CREATED_AT_MAX_AHEAD_MS;
  }, 'must lie between 1970-01-01T00:00:00Z and one day from now');

export const UserIdSchema = wellFormed(z.string().min(1).max(128));
export const SessionIdSchema = wellFormed(z.string().min(1).max(128));

/**
 * The schema of one turn as every write path accepts it (docs/architecture.md, records). `maxTurnChars` comes from config,
 * so the schema is built once at wiring time.
 */
export function turnInputSchema(maxTurnChars: number) {
  return z.strictObject({
    user_id: UserIdSchema.default(DEFAULT_USER).describe(`whose memory this is (default "${DEFAULT_USER}"; with API keys, the key's user)`),
    session_id: SessionIdSchema.describe('the conversation it belongs to (over HTTP: the path\'s session)'),
    role: RoleSchema.describe(`who spoke: ${ROLES.join(', ')}`),
    name: text(128).optional().describe('the speaker\'s name, when a chat has several people ("Dolores")'),
    content: contentSchema(maxTurnChars).describe('what was said (at most max_turn_chars characters, default 32000)'),
    id: MemoryIdSchema.optional().describe('your id for the turn, per user (an idempotency key: the same turn re-sent is a duplicate, other text under it a 409); default: generated'),
    created_at: createdAtSchema.optional().describe('when it was said, ISO 8601 with offset; default: now'),
    importance: z.number().min(0).max(1).optional().describe('0–1; default: scored by the importance heuristic'),
    pinned: z.boolean().default(false).describe('never pruned, compacted or archived away (default false)'),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((m) => serializedBytes(m) <= METADATA_MAX_BYTES, `must be at most ${METADATA_MAX_BYTES} bytes serialized`)
      .superRefine(refuseUnstorable)
      .optional()
      .describe(`any JSON object (at most ${METADATA_MAX_BYTES} bytes; no U+0000 or unpaired surrogate in its text); retrieve can filter on its top-level keys`),
  });
}

/** One line of an `ingest` file, as the README and `ingest --help` show it (a test parses it). */
export const TURN_EXAMPLE = '{"user_id":"alice","session_id":"2024-05-trip","role":"user","content":"My sister Ana is a nurse in Porto.","created_at":"2024-05-02T18:30:00Z","metadata":{"source":"whatsapp"}}';

export type TurnInputSchema = ReturnType<typeof turnInputSchema>;
/** What a caller sends (defaults optional). */
export type TurnInput = z.input<TurnInputSchema>;

/** A turn after validation and normalization: every field the stores need. */
export const TurnSchema = MemoryRecordSchema.extend({
  /** null until scored (by the client, or by the persist job) */
  importance: z.number().nullable(),
  pinned: z.boolean(),
  /**
   * Absent for what clients send (a turn). Set on the summary a compaction puts at the head of a
   * session's short-term history; read it with `kindOf`, which also knows records written before it.
   */
  kind: KindSchema.optional(),
});
export type Turn = z.infer<typeof TurnSchema>;
