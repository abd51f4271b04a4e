import type { MemoryEntry } from '../domain/entry.js';
import type { RecordFilter } from '../domain/filters.js';

export interface TextHit {
  entry: MemoryEntry;
  /** BM25 relevance, higher is better */
  bm25: number;
  /** with ListOptions.bySession: the BM25 of the hit's session read as one document */
  session_bm25?: number;
}

export interface ListOptions {
  sessionId?: string;
  limit: number;
  /** only entries created at or after this ISO-8601 time (searchText, recent) */
  createdFrom?: string;
  /** only entries created before this ISO-8601 time (searchText, recent) */
  createdBefore?: string;
  /**
   * searchText: query words that name someone who speaks in the user's entries ("What has Melanie
   * painted?"): they match who SAID an entry, not entries that mention the name — Melanie's own turns,
   * not Caroline's "Melanie, that's lovely!".
   */
  speakerTerms?: readonly string[];
  /**
   * searchText: also score each hit's session as one document (its words summed over its entries
   * meeting the search's conditions, its length the session's, with the user's own statistics over
   * sessions) and give it as `session_bm25`. A chat message refers back to a conversation.
   */
  bySession?: boolean;
  /**
   * searchText: words scored beside the query's own (the query may be empty), each counting `weight`
   * times as much as one of the query's words: a word of both counts 1 + weight. Each is read as
   * `queryTerms` reads a query; the user's common ones are left out as the query's are.
   */
  expansion?: ReadonlyArray<{ word: string; weight: number }>;
  /** a retrieval filter (searchText, searchSubstring, recent): applied in the query, before `limit` */
  where?: RecordFilter;
  /**
   * searchText: aborts once the caller no longer waits for the answer (its tier budget ran out, or the
   * pass's own caller left). A search not started by then is not run; the returned promise rejects
   * with the signal's reason.
   */
  signal?: AbortSignal;
}

export interface PruneCriteria {
  /** one user's memories; absent: every user's (the CLI only) */
  userId?: string;
  olderThanDays?: number;
  belowImportance?: number;
  sessionId?: string;
}

/** A memory as its tiers know it: the user's id, and the session its short-term copy lives in. */
export interface MemoryRef {
  user_id: string;
  id: string;
  session_id: string;
}

/**
 * What merging the full-text index did (LongTermStore.mergeTextIndex). `parts`: the pieces a search
 * reads each word from, before and after — SQLite: FTS5 segments (each commit writes one, FTS5 merges
 * them a few at a time); PostgreSQL: pages of the GIN index's pending list (rows not yet in the index
 * proper). `ms`: the merge's wall time.
 */
export interface TextIndexMerge {
  parts_before: number;
  parts_after: number;
  ms: number;
}

export interface EntryPatch {
  content?: string;
  importance?: number;
  pinned?: boolean;
}

/**
 * Long-term tier: important turns, summaries and archives of each user.
 *
 * Contract: an entry is keyed by (user_id, id): two users' equal ids are two entries, and every read
 * and write names the user. `upsert` is idempotent by that key; equal text under two ids is two
 * entries (retrieval merges them by content hash). `persistTurn` writes a turn's entry only while the
 * turn log still holds that turn with that text, checked in the write's own transaction, so a
 * delete or edit that wins the race is never undone. `prune` never removes a pinned entry. Text
 * search ranks by BM25 over content and participant name; substring search matches `%`, `_` and `\`
 * literally.
 */
export interface LongTermStore {
  /** the database holding the entries, as retrieval reports name the tier's backend */
  readonly backend: 'sqlite' | 'postgres';
  /** returns the ids actually written (new) */
  upsert(entries: readonly MemoryEntry[]): Promise<string[]>;
  /**
   * Writes the entry of a logged turn (kind 'turn') when the turn log still holds (user_id, id) with
   * its content_hash; false, writing nothing, when the turn was deleted or edited since.
   */
  persistTurn(entry: MemoryEntry): Promise<boolean>;
  get(userId: string, id: string): Promise<MemoryEntry | null>;
  searchText(userId: string, query: string, options: ListOptions): Promise<TextHit[]>;
  searchSubstring(userId: string, q: string, options: ListOptions): Promise<MemoryEntry[]>;
  recent(userId: string, options: ListOptions): Promise<MemoryEntry[]>;
  /**
   * The distinct names (who said it) among the user's newest `limit` entries — what `recent` would
   * give, without reading the entries. Optional: the retrieval pass reads `recent` without it.
   */
  participants?(userId: string, limit: number): Promise<string[]>;
  update(userId: string, id: string, patch: EntryPatch): Promise<MemoryEntry | null>;
  delete(userId: string, ids: readonly string[]): Promise<number>;
  /** deletes matching unpinned entries; returns which */
  prune(criteria: PruneCriteria): Promise<MemoryRef[]>;
  /** deletes every entry of a user (or one session of theirs), pinned included; returns the ids */
  deleteWhere(userId: string, sessionId?: string): Promise<string[]>;
  count(userId?: string): Promise<number>;
  /** pages through every entry of every user in insertion order (memory reindex) */
  scan(batch?: number): AsyncIterable<MemoryEntry[]>;
  /**
   * Merges the full-text index into one piece (see TextIndexMerge), off the caller's event loop;
   * every search answers as before, at less cost a word. Writers wait while it runs.
   */
  mergeTextIndex(): Promise<TextIndexMerge>;
}
