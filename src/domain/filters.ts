import { z } from 'zod';
import { KindSchema, RoleSchema, type VectorPayload } from './record.js';
import { SessionIdSchema, wellFormed } from './turn.js';

/** one value a metadata key is compared with: type-strict ("1" is not 1) */
export const MetadataScalarSchema = z.union([wellFormed(z.string().max(256)), z.number().finite(), z.boolean()]);
export type MetadataScalar = z.infer<typeof MetadataScalarSchema>;

const MAX_LIST = 100;

/** top-level metadata keys only: safe in a JSON path (SQLite, PostgreSQL) and a Qdrant payload key */
const METADATA_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const MetadataConditionSchema = z.union([MetadataScalarSchema, z.strictObject({ in: z.array(MetadataScalarSchema).min(1).max(MAX_LIST) })], {
  error: 'must be a string, a number, a boolean, or {"in": [one of those, …]}',
});

const isoTime = z.iso
  .datetime({ offset: true })
  // stored times are Date#toISOString(), so one canonical form lets every backend compare them as text
  .transform((v) => new Date(v).toISOString());

/**
 * What a retrieval may be restricted to. Every condition given must hold (AND); a list matches any of
 * its values (OR). Each tier applies the filter while it searches, before it cuts its candidates to
 * size: a filtered retrieve still returns top_k results when that many memories match.
 */
export const RetrieveFiltersSchema = z
  .strictObject({
    /** metadata key → a value it must equal, or `{in: [...]}`: one of them */
    metadata: z
      .record(z.string(), MetadataConditionSchema)
      .superRefine((m, ctx) => {
        const keys = Object.keys(m);
        if (keys.length > 16) ctx.addIssue({ code: 'custom', message: 'at most 16 metadata keys' });
        for (const k of keys) {
          if (!METADATA_KEY.test(k)) ctx.addIssue({ code: 'custom', path: [k], message: `metadata key ${JSON.stringify(k)}: a top-level key of 1–64 letters, digits, _ or -` });
        }
      })
      .optional(),
    /** memories of these sessions only (the current session's short-term turns too) */
    session_ids: z.array(SessionIdSchema).min(1).max(MAX_LIST).optional(),
    roles: z.array(RoleSchema).min(1).optional(),
    kinds: z.array(KindSchema).min(1).optional(),
    /** created at or after this time (ISO 8601 with offset) */
    created_after: isoTime.optional(),
    /** created strictly before this time */
    created_before: isoTime.optional(),
  })
  .refine((f) => f.created_after === undefined || f.created_before === undefined || f.created_after < f.created_before, {
    message: 'created_after must be earlier than created_before',
    path: ['created_before'],
  });
export type RecordFilter = z.infer<typeof RetrieveFiltersSchema>;
export type RecordFilterInput = z.input<typeof RetrieveFiltersSchema>;

/** What a filter looks at: every memory in every tier carries these. */
export type Filterable = Pick<VectorPayload, 'session_id' | 'role' | 'kind' | 'created_at' | 'metadata'>;

/** A metadata condition as a list of accepted values. */
export function acceptedValues(cond: MetadataScalar | { in: MetadataScalar[] }): MetadataScalar[] {
  return typeof cond === 'object' ? cond.in : [cond];
}

/** true when the filter restricts nothing */
export function isEmptyFilter(f: RecordFilter | undefined): boolean {
  if (!f) return true;
  return (
    (f.metadata === undefined || Object.keys(f.metadata).length === 0) &&
    f.session_ids === undefined &&
    f.roles === undefined &&
    f.kinds === undefined &&
    f.created_after === undefined &&
    f.created_before === undefined
  );
}

/**
 * The meaning of a filter, in one place: the short-term tier applies it as is, and each backend's
 * contract suite checks that its own query (SQL, Qdrant conditions, the embedded scan) selects the
 * same memories.
 */
export function matchesFilter(r: Filterable, f: RecordFilter | undefined): boolean {
  return filterTest(f)(r);
}

/**
 * matchesFilter with the filter read once: for a test of many records (a store's matches), which then
 * allocates nothing per record.
 */
export function filterTest(f: RecordFilter | undefined): (r: Filterable) => boolean {
  if (!f) return () => true;
  const { session_ids: sessions, roles, kinds, created_after: after, created_before: before } = f;
  const metadata = Object.entries(f.metadata ?? {}).map(([key, cond]) => [key, acceptedValues(cond)] as const);
  return (r) =>
    (!sessions || sessions.includes(r.session_id)) &&
    (!roles || roles.includes(r.role)) &&
    (!kinds || kinds.includes(r.kind)) &&
    (after === undefined || r.created_at >= after) &&
    (before === undefined || r.created_at < before) &&
    metadata.every(([key, accepted]) => accepted.includes(r.metadata?.[key] as MetadataScalar));
}
