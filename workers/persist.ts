import type { PersistJob } from '../queues/payloads.js';
import type { JobOutcome } from '../queues/queue.js';
import { scoreImportance } from '../src/domain/importance.js';
import { entryOfTurn } from '../src/domain/entry.js';
import { room } from '../src/pace.js';
import type { Turn } from '../src/domain/turn.js';
import type { LongTermStore } from '../src/ports/long-term.js';
import type { TurnLog } from '../src/ports/turn-log.js';

/** What the persist processor needs: the durable store's turn log and long-term store. */
export interface PersistDeps {
  turnLog: Pick<TurnLog, 'getMany' | 'markPersisted'>;
  longTerm: Pick<LongTermStore, 'persistTurn'>;
  importanceThreshold: number;
}

export type PersistResult = { stored: boolean; importance: number } | null;

/**
 * Scores the turn's importance when it carries none and writes it to the long-term store when it
 * reaches the threshold (or is pinned). Idempotent: the store upserts by (user, id). The entry is
 * written only while the turn log still holds the turn with the text read here, checked in the
 * write's own transaction (LongTermStore.persistTurn): a delete or edit that lands while the job runs
 * is never undone by it.
 */
export async function processPersist(job: PersistJob, deps: PersistDeps): Promise<PersistResult> {
  const [outcome] = await processPersistBatch([job], deps);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value as PersistResult;
}

/**
 * `processPersist` of many jobs at once: one read of their turns, their entries written in the same
 * event-loop turn and their marks in the next (a store that batches its writes — SQLite's transaction
 * batcher, PostgreSQL's coalescer — commits each group together). A job whose write fails fails
 * alone: each write is its own call, and the stores retry a failed batch call by call.
 */
export async function processPersistBatch(jobs: readonly PersistJob[], deps: PersistDeps): Promise<JobOutcome[]> {
  const turns = await deps.turnLog.getMany(jobs.map((j) => ({ user_id: j.user_id, id: j.turn_id })));
  // scored one after the other in the process's slices of work (src/pace.ts): a long turn's score reads
  // its whole text; then the writes together (the store's batch)
  const scores: Array<number | null> = [];
  for (const turn of turns) {
    await room();
    scores.push(turn ? (turn.importance ?? scoreImportance(turn.content, turn.role)) : null);
  }
  return Promise.all(
    turns.map(async (turn, i): Promise<JobOutcome> => {
      try {
        return { ok: true, value: await persistOne(turn, scores[i]!, deps) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
}

async function persistOne(turn: Turn | null, importance: number | null, deps: PersistDeps): Promise<PersistResult> {
  if (!turn || importance === null) return null; // deleted or forgotten since it was enqueued
  let stored = turn.pinned || importance >= deps.importanceThreshold;
  if (stored) {
    stored = await deps.longTerm.persistTurn(entryOfTurn(turn, importance));
    if (!stored) return null; // deleted or edited while it was read (an edit enqueues its own jobs)
  }
  await deps.turnLog.markPersisted(turn.user_id, turn.id, importance);
  return { stored, importance };
}
