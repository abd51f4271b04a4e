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

export interface ShortTermOptions {
  ttlSeconds: number;
  maxTurns: number;
}
