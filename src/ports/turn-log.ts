import type { Turn } from '../domain/turn.js';
import type { MemoryRef, PruneCriteria } from './long-term.js';

export interface AppendResult {
  /** turns written now */
  accepted: Turn[];
  /** ids already in the log for the same user (a retried write): stored once */
  duplicates: string[];
}

export interface TurnLogCounts {
  total: number;
  pending_embed: number;
  pending_persist: number;
}

/** Which jobs of a turn are still to run: `embed`, `persist`, or `any` (either). */
export type PendingJob = 'embed' | 'persist' | 'any';

/** what a check of a turn needs: the hash of its text and its session, as the log holds them now */
export type TurnVersion = Pick<Turn, 'content_hash' | 'session_id'>;

/** the turns around one in its session: those just before it (oldest first) and just after it */
export interface Around {
  before: Turn[];
  after: Turn[];
}

/**
 * The turn log: the durable record of every accepted turn and the outbox of its jobs. A turn is
 * acknowledged only once `append` has resolved; which of its jobs have completed is recorded beside it,
 * so unfinished ones can be re-enqueued after any crash (see the reconciler).
 *
 * Contract: ids are the user's own — every call names the user, and another user's turns never meet
 * them. `append` is all or nothing: every turn is durable when it resolves, or none is written;
 * concurrent appends may share one commit (each still resolves only once committed). An id the user
 * already holds with the same session, role, name and content is a duplicate (stored once, reported in
 * `duplicates`); with anything of that different it rejects with `ContentConflictError` naming the id,
 * and nothing of the batch is written. `markEmbedded` and
 * `markPersisted` may be committed together with other jobs' bookkeeping (one commit per batch: the
 * batching is the implementation's business) and resolve once durable. `pending` and `scan` page in
 * acceptance order. An edit (`updateContent`) resets the turn's embed state. Deletes are final.
 * Not covered: search (the long-term tier ranks), the session cache (the short-term tier), and the
 * vectors (the semantic tier).
 */
export interface TurnLog {
  append(turns: readonly Turn[], acceptedAt?: number): Promise<AppendResult>;
  get(userId: string, id: string): Promise<Turn | null>;
  /** `get` of many turns in one read (a batch of jobs): the answer for each ref, in order, null where unknown */
  getMany(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<Turn | null>>;
  /** `getMany` without the texts, for a check whether turns are still what a job or a copy holds: each ref's version, in order, null where unknown */
  versions(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<TurnVersion | null>>;
  /** pages of turns accepted at or before `acceptedBefore` whose `job` has not completed, in acceptance order */
  pending(job: PendingJob, acceptedBefore: number, batch?: number): AsyncIterable<Turn[]>;
  /** how many of `ids` still have a job to run (embed counted only when `withEmbed`) */
  unfinished(refs: ReadonlyArray<{ user_id: string; id: string }>, withEmbed: boolean): Promise<number>;
  markEmbedded(userId: string, ids: readonly string[], embedderId: string): Promise<void>;
  /** records the persist job done, and the importance it scored when the turn carried none */
  markPersisted(userId: string, id: string, importance: number, at?: number): Promise<void>;
  counts(): Promise<TurnLogCounts>;
  /** a session's turns, oldest first */
  session(userId: string, sessionId: string): Promise<Turn[]>;
  /** the turns just before (oldest first) and just after each of the user's turns `ids` in its session, by id; a turn unknown is absent */
  neighbours(userId: string, ids: readonly string[], before?: number, after?: number): Promise<Map<string, Around>>;
  /** pages through every turn in acceptance order (reindex, export) */
  scan(batch?: number): AsyncIterable<Turn[]>;
  /** an edited turn must be re-embedded: its embed state is reset; false when the turn is unknown */
  updateContent(userId: string, id: string, content: string, hash: string): Promise<boolean>;
  delete(userId: string, ids: readonly string[]): Promise<number>;
  /** deletes the unpinned turns a prune matches, except those whose long-term entry is pinned; returns which */
  prune(criteria: PruneCriteria): Promise<MemoryRef[]>;
  deleteWhere(userId: string, sessionId?: string): Promise<number>;
}
