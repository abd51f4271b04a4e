import { recordOf, type Kind, type MemoryRecord } from '../src/domain/record.js';
import { jobIdFor } from './job-ids.js';
import type { JobSpec } from './queue.js';

/** What an embed job needs of a memory: a turn, a summary or an archive — any memory record. */
export type Embeddable = MemoryRecord;

/**
 * The `embed` job of one memory. Its id is derived from the memory (and `nonce`, when the same memory
 * must be embedded again while BullMQ still remembers the earlier job: an edit, an import).
 */
export function embedJob(m: Embeddable, kind: Kind = 'turn', nonce?: string): JobSpec<'embed'> {
  const { id, ...payload } = recordOf(m);
  return {
    jobId: jobIdFor('embed', nonce === undefined ? memoryKey(m) : `${memoryKey(m)}\u0000${nonce}`),
    data: Object.assign(payload, { turn_id: id, kind }),
  };
}

/**
 * The ids of every job that may hold a memory's text or name it: its `embed` job under its first
 * text, those under `hashes` (a later text: an edit's job, an import's, a re-embed's carry their
 * text's hash as nonce) and its `persist` job. A delete or edit removes them by id.
 */
export function memoryJobIds(m: { user_id: string; id: string }, hashes: readonly string[]): { embed: string[]; persist: string[] } {
  const key = memoryKey(m);
  return {
    embed: [jobIdFor('embed', key), ...[...new Set(hashes)].map((h) => jobIdFor('embed', `${key}\u0000${h}`))],
    persist: [jobIdFor('persist', key)],
  };
}

/** The `persist` job of one turn; the processor reads the turn from the turn log. */
export function persistJob(turn: { user_id: string; id: string }): JobSpec<'persist'> {
  return { jobId: jobIdFor('persist', memoryKey(turn)), data: { user_id: turn.user_id, turn_id: turn.id } };
}

/** A memory is its user's: two users' equal ids are two units of work. */
function memoryKey(m: { user_id: string; id: string }): string {
  return `${m.user_id}\u0000${m.id}`;
}
