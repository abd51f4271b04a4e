import type { Turn } from '../domain/turn.js';

/**
 * Short-term tier: the recent turns of each session, newest last.
 *
 * Contract: `push` appends in order, keeps at most `maxTurns` per session (dropping the oldest) and
 * refreshes the session's TTL; a session untouched for its TTL disappears whole. Sessions are scoped
 * by user: the same session id under two users is two sessions. A push of a turn id already in the
 * session is ignored (a retried write). Not covered: search (the retrieval pass ranks what `recent`
 * returns) and durability (the turn log is the durable record).
 */
export interface ShortTermStore {
  readonly backend: 'memory' | 'redis';
  push(turns: readonly Turn[]): Promise<void>;
  /** the session's turns, oldest first, at most `limit` of the newest */
  recent(userId: string, sessionId: string, limit?: number): Promise<Turn[]>;
  /**
   * `recent` for a reader that keeps a copy of what it read at version `known` (a version this store
   * gave; null: none): null while the session is unchanged since, else its turns and their version.
   * Every change of a session (a turn added or dropped, a replace, a clear, its TTL running out) gives
   * it a version no session had before; no session is version 0. A store that keeps no versions
   * answers the turns with version null, every time.
   */
  recentSince(userId: string, sessionId: string, limit: number | undefined, known: number | null): Promise<VersionedTurns | null>;
  /** replaces a session's history (compaction writes its summary this way) */
  replace(userId: string, sessionId: string, turns: readonly Turn[]): Promise<void>;
  /** removes turns by id from one session; returns how many were removed */
  remove(userId: string, sessionId: string, ids: readonly string[]): Promise<number>;
  /** removes sessions; no session id → every session of the user; returns sessions removed */
  clear(userId: string, sessionId?: string): Promise<number>;
  clearAll(): Promise<number>;
  /** the user's live sessions (for forget/export/inspection) */
  sessions(userId: string): Promise<string[]>;
  /** every live session of every user (doctor's check of what the tier holds) */
  everySession(): Promise<Array<{ user_id: string; session_id: string }>>;
  /** true when the backend answers */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** a session's turns as `recentSince` answers them */
export interface VersionedTurns {
  version: number | null;
  turns: Turn[];
}

export interface ShortTermOptions {
  ttlSeconds: number;
  maxTurns: number;
}
