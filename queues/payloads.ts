import { z } from 'zod';
import { KindSchema, VectorPayloadSchema } from '../src/domain/record.js';
import type { QueueName } from './names.js';

/**
 * `embed` carries the text it embeds — the vector's whole payload — so an embed worker on a host
 * without the SQLite file (writing to Qdrant) needs nothing else. The memory's id travels as
 * `turn_id` (summaries and archives too), and jobs queued before `kind` and `metadata` existed carry
 * neither: a turn, without metadata.
 */
export const EmbedJobSchema = VectorPayloadSchema.extend({
  turn_id: z.string(),
  kind: KindSchema.default('turn'),
});

/** `persist` reads the turn from the turn log by (user, id). */
export const PersistJobSchema = z.object({ user_id: z.string(), turn_id: z.string() });

export const CompactJobSchema = z.object({
  user_id: z.string(),
  session_id: z.string(),
  reason: z.enum(['threshold', 'manual']).default('threshold'),
});

export const ArchiveJobSchema = z.object({
  inactive_days: z.number().positive().optional(),
  dry_run: z.boolean().default(false),
  /** 'schedule' for the jobs of the archival scheduler: a completed occurrence is never run twice */
  trigger: z.enum(['schedule', 'manual']).default('manual'),
});

export const JOB_SCHEMAS = {
  embed: EmbedJobSchema,
  persist: PersistJobSchema,
  compact: CompactJobSchema,
  archive: ArchiveJobSchema,
} as const satisfies Record<QueueName, z.ZodType>;

/** This project's jobs: each queue name with its payload (what the job-queue port is instantiated with). */
export type Jobs = { [Q in QueueName]: z.infer<(typeof JOB_SCHEMAS)[Q]> };
export type JobPayload<Q extends QueueName> = Jobs[Q];
export type EmbedJob = JobPayload<'embed'>;
export type PersistJob = JobPayload<'persist'>;
export type CompactJob = JobPayload<'compact'>;
export type ArchiveJob = JobPayload<'archive'>;
