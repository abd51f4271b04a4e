import type { SessionStats, UserSummary } from '../domain/inspection.js';
import type { Turn } from '../domain/turn.js';

/** A memory a check found, named by its owner and id (and session, for its short-term copy). */
export interface Found {
  user_id: string;
  id: string;
  session_id: string;
}

/** Entries of one user holding the same text under different ids. */
export interface DuplicateGroup {
  user_id: string;
  content_hash: string;
  ids: string[];
}

/** What `doctor` says about the durable store: where it is, how big, its schema, and whether this process can write it. */
export interface StoreReport {
  kind: 'sqlite' | 'postgres';
  /** the SQLite file's absolute path, or the database URL with its password masked */
  path: string;
  /** the store's size on disk */
  bytes: number;
  /** its write-ahead log's size, where the store has one beside it (SQLite); 0 otherwise */
  wal_bytes: number;
  /** how writes are journalled (SQLite's journal mode; `postgres` for PostgreSQL) */
  journal_mode: string;
  schema_version: number;
  /** the newest migration this build knows; a store ahead of it was written by a newer build */
  latest_version: number;
  /** true when this process could take the write lock (and write the store) */
  writable: boolean;
  problem?: string;
  /** rows per memory table */
  rows: { turns: number; entries: Record<string, number>; vectors: number };
}

/** A turn of a session as the inspector shows it: the turn and which of its jobs are still to run. */
export interface InspectedTurn {
  turn: Turn;
  pending: { embed: boolean; persist: boolean };
}

/** Which users a listing covers: every one (an admin key, or no keys), or the named ones. */
export type UserScope = { all: true } | { all: false; users: readonly string[] };

/**
 * The read-mostly side of the durable store that `doctor`, `/health` and the memory inspector need:
 * a liveness probe, a description of the store, per-user and per-session counts, and the integrity
 * checks over the turn log, the long-term entries and the vectors the store itself holds (the embedded
 * index's; see docs/architecture.md, maintenance).
 *
 * Contract: every method reads one consistent snapshot and changes nothing, except `realign` and
 * `markUnembedded`, the two repairs only the store can make (each atomic). `ping` resolves when the
 * store answers a trivial query and rejects otherwise. `users` lists only users that hold something,
 * most recently active first (ties by user id); `sessions` likewise for one user's sessions.
 * `sessionTurns` returns the newest `limit` turn-log turns of a session, newest first. `orphanVectors`
 * and `staleVectors` cover the vectors kept in this store (the embedded index); a store that keeps
 * none returns []. Not covered: the short-term tier, Qdrant's points and the queue (the use cases read
 * those through their own ports), and the repairs that go through the tiers' ports (deletes, re-enqueues).
 */
export interface MaintenanceStore {
  ping(): Promise<void>;
  /** bytes free to this process on the disk holding the store, with the path named; null where the service cannot see that disk (a database server) */
  freeSpace(): Promise<{ path: string; bytes: number } | null>;
  describe(): Promise<StoreReport>;
  /** users with anything stored (every one, or those of `scope`), most recently active first, at most `limit` */
  users(scope: UserScope, limit: number): Promise<UserSummary[]>;
  /** a user's sessions (turn log and long-term store), most recently active first */
  sessions(userId: string, limit: number): Promise<SessionStats[]>;
  sessionTurns(userId: string, sessionId: string, limit: number): Promise<InspectedTurn[]>;
  /** long-term entries of kind turn whose turn-log row is gone (written after a delete) */
  orphanEntries(): Promise<Found[]>;
  /** vectors of memories that are gone: no turn-log row, and no long-term entry but a turn's */
  orphanVectors(): Promise<Found[]>;
  /** entries of kind turn whose text is not their turn's (an edit that reached one tier only) */
  staleEntries(): Promise<Found[]>;
  /** vectors whose text is not their memory's now */
  staleVectors(): Promise<Found[]>;
  /** turns accepted before `acceptedBefore` whose embed or persist job has not completed */
  unfinished(acceptedBefore: number): Promise<Found[]>;
  /** groups of entries of one user with equal text under different ids (kept by design; listed for the operator) */
  duplicateContent(limit?: number): Promise<{ groups: number; sample: DuplicateGroup[] }>;
  /** whether the user holds the memory in the turn log or the long-term store */
  live(userId: string, id: string): Promise<boolean>;
  /** an entry of kind turn takes its turn's text again, and the turn is marked for re-embedding */
  realign(userId: string, id: string): Promise<void>;
  /** a memory whose vector was removed (stale) is to be embedded again by the reconciler */
  markUnembedded(userId: string, id: string): Promise<void>;
}
