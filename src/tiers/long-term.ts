import type { MemoryEntry } from '../domain/entry.js';

export interface TextHit {
  entry: MemoryEntry;
  /** BM25 relevance, higher is better */
  bm25: number;
}

export interface ListOptions {
  sessionId?: string;
  limit: number;
  /** only entries created at or after this ISO-8601 time (searchText, recent) */
  createdFrom?: string;
  /** only entries created before this ISO-8601 time (searchText, recent) */
  createdBefore?: string;
}

export interface PruneCriteria {
  userId?: string;
  olderThanDays?: number;
  belowImportance?: number;
  sessionId?: string;
}

export interface EntryPatch {
  content?: string;
  importance?: number;
  pinned?: boolean;
}

/**
 * Long-term tier: important turns, summaries and archives of each user.
 *
 * Contract: `upsert` is idempotent by id, and by (user, content hash): an entry whose text the user
 * already has is not stored twice. Every read is scoped to one user. `prune` never removes a pinned
 * entry. Text search ranks by BM25 over content and participant name; substring search matches `%`,
 * `_` and `\` literally.
 */
export interface LongTermStore {
  /** returns the ids actually written (new or changed) */
  upsert(entries: readonly MemoryEntry[]): Promise<string[]>;
  get(id: string): Promise<MemoryEntry | null>;
  searchText(userId: string, query: string, options: ListOptions): Promise<TextHit[]>;
  searchSubstring(userId: string, q: string, options: ListOptions): Promise<MemoryEntry[]>;
  recent(userId: string, options: ListOptions): Promise<MemoryEntry[]>;
  update(id: string, patch: EntryPatch): Promise<MemoryEntry | null>;
  delete(ids: readonly string[]): Promise<number>;
  /** deletes matching unpinned entries; returns the deleted entries' ids */
  prune(criteria: PruneCriteria): Promise<string[]>;
  /** deletes every entry of a user (or one session of theirs), pinned included; returns the ids */
  deleteWhere(userId: string, sessionId?: string): Promise<string[]>;
  count(userId?: string): Promise<number>;
}
