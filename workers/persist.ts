import type { PersistJob } from '../queues/payloads.js';
import { scoreImportance } from '../src/domain/importance.js';
import type { ProcessorDeps } from './deps.js';

/**
 * Scores the turn's importance when it carries none and writes it to the long-term store when it
 * reaches the threshold (or is pinned). Idempotent: the store upserts by id and content hash.
 */
export async function processPersist(job: PersistJob, deps: ProcessorDeps): Promise<{ stored: boolean; importance: number } | null> {
  if (!deps.turnLog || !deps.longTerm) throw new Error('persist jobs must run on the host that holds the SQLite file');
  const turn = deps.turnLog.get(job.turn_id);
  if (!turn) return null; // deleted or forgotten since it was enqueued
  const importance = turn.importance ?? scoreImportance(turn.content, turn.role);
  const stored = turn.pinned || importance >= deps.importanceThreshold;
  if (stored) {
    await deps.longTerm.upsert([
      {
        id: turn.id,
        user_id: turn.user_id,
        session_id: turn.session_id,
        role: turn.role,
        name: turn.name,
        kind: 'turn',
        content: turn.content,
        content_hash: turn.content_hash,
        importance,
        pinned: turn.pinned,
        metadata: turn.metadata,
        covers: null,
        created_at: turn.created_at,
        updated_at: turn.created_at,
      },
    ]);
  }
  const turnLog = deps.turnLog;
  await turnLog.writes.run(() => turnLog.markPersisted(turn.id, importance));
  return { stored, importance };
}
