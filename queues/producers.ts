import type { Kind } from '../src/domain/entry.js';
import type { Role } from '../src/domain/turn.js';
import { jobIdFor } from './job-ids.js';
import type { JobSpec } from './queue.js';

/** What an embed job needs of a memory: a turn, a summary or an archive. */
export interface Embeddable {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  content: string;
  content_hash: string;
  created_at: string;
  metadata: Record<string, unknown> | null;
}

/**
 * The `embed` job of one memory. Its id is derived from the memory (and `nonce`, when the same memory
 * must be embedded again while BullMQ still remembers the earlier job: an edit, an import).
 */
export function embedJob(m: Embeddable, kind: Kind = 'turn', nonce?: string): JobSpec<'embed'> {
  return {
    jobId: jobIdFor('embed', nonce === undefined ? memoryKey(m) : `${memoryKey(m)}\u0000${nonce}`),
    data: {
      turn_id: m.id,
      user_id: m.user_id,
      session_id: m.session_id,
      role: m.role,
      name: m.name,
      kind,
      content: m.content,
      content_hash: m.content_hash,
      created_at: m.created_at,
      metadata: m.metadata,
    },
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
