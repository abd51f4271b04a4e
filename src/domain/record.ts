import { z } from 'zod';

export const ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export const RoleSchema = z.enum(ROLES);
export type Role = z.infer<typeof RoleSchema>;

export const KINDS = ['turn', 'summary', 'archive'] as const;
export const KindSchema = z.enum(KINDS);
export type Kind = z.infer<typeof KindSchema>;

export const MetadataSchema = z.record(z.string(), z.unknown());

/**
 * What every memory is, in every tier and on every queue (docs/architecture.md, records): the turn,
 * the long-term entry, the embed job, the vector's payload and the retrieval candidate all extend this
 * one schema, so a field is added or changed here once. Ids are the user's own.
 */
export const MemoryRecordSchema = z.object({
  id: z.string(),
  user_id: z.string(),
  session_id: z.string(),
  role: RoleSchema,
  name: z.string().nullable(),
  content: z.string(),
  content_hash: z.string(),
  created_at: z.string(),
  metadata: MetadataSchema.nullable(),
});
export type MemoryRecord = z.infer<typeof MemoryRecordSchema>;

const RECORD_KEYS = Object.keys(MemoryRecordSchema.shape) as Array<keyof MemoryRecord>;

/** The record's own fields of any wider value (a turn, an entry, a candidate): what moves between tiers. */
export function recordOf(m: MemoryRecord): MemoryRecord {
  const out = {} as Record<keyof MemoryRecord, unknown>;
  for (const k of RECORD_KEYS) out[k] = m[k];
  return out as MemoryRecord;
}

/**
 * A turn's kind: its `kind` field, else — for records written before turns had one (a session's
 * short-term history keeps them for its TTL) — the `metadata.kind` a compaction's summary turn
 * carries, else a plain turn.
 */
export function kindOf(t: { kind?: Kind | undefined; metadata: Record<string, unknown> | null }): Kind {
  if (t.kind) return t.kind;
  const legacy = t.metadata?.kind;
  return legacy === 'summary' || legacy === 'archive' ? legacy : 'turn';
}

/** The semantic tier's payload of a memory of `kind`. */
export function vectorPayloadOf(m: MemoryRecord, kind: Kind): VectorPayload {
  const { id: _id, ...payload } = recordOf(m);
  return { ...payload, kind };
}

/**
 * What the semantic tier keeps beside each vector, so a hit needs no lookup elsewhere: the record
 * without its id (the point's key) and with its kind. Metadata is absent in points written before it
 * was kept.
 */
export const VectorPayloadSchema = MemoryRecordSchema.omit({ id: true, metadata: true }).extend({
  kind: KindSchema,
  metadata: MetadataSchema.nullable().optional(),
});
export type VectorPayload = z.infer<typeof VectorPayloadSchema>;
