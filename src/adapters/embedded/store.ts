import type { RecordFilter } from '../../domain/filters.js';
import type { EmbedderTag, VectorFilter, VectorPayload, VectorPoint } from '../../ports/vector-index.js';

/** A row of `vectors` as the in-memory index needs it. */
export interface IndexRow {
  /** the row's number, stable across replaces of the same (user, id, embedder, part) */
  rowid: number;
  id: string;
  /** 0: the entry's whole text; n ≥ 1: its n-th passage */
  part: number;
  user_id: string;
  session_id: string;
  /** its memory's created_at in epoch milliseconds: a search tests a time filter in memory */
  created_ms: number;
  vector: Float32Array;
}

/** A row a delete removed. */
export interface RemovedRow {
  user_id: string;
  id: string;
  embedder: string;
}

/** A full row, read for the few candidates a search reranks. */
export interface FullRow {
  id: string;
  part: number;
  embedder: string;
  payload: VectorPayload;
  vector: Float32Array;
}

/** receives each row of a load (positional: no object per row of a 100k-row load) */
export type LoadPut = (id: string, userId: string, sessionId: string, rowid: number, vector: Float32Array, part: number, createdMs: number) => void;

/**
 * One entry of the change log: a vector of the entry (user, id) was written or deleted, under that
 * embedder (which part is not logged: a reader re-reads every part of the entry).
 */
export interface Change {
  seq: number;
  user_id: string;
  id: string;
  embedder: string;
}

/** The change-log seqs a write produced: (from, to], every one of them this write's own. */
export interface ChangeRange {
  from: number;
  to: number;
}

/** A write's outcome: its result and the change-log range it produced. */
export interface Written<T> {
  result: T;
  changes: ChangeRange;
}

/**
 * Where the embedded index keeps its vectors and their change log: the SQLite file, or a PostgreSQL
 * database shared by every process on every host. The index holds the int8 codes in memory and asks
 * the store for everything else (float32 vectors and payloads of a search's candidates, filters).
 *
 * Contract: every write is one transaction that also logs one change per vector written or deleted;
 * writes are serialised (one at a time across every process using the store), so change seqs commit
 * in increasing order and a write's changes are the contiguous range (from, to] it returns — a reader
 * that saw seq s has seen every change ≤ s. Each write prunes the log to its newest `retain` changes
 * (in steps), and `head` says how far it was pruned, so a reader that fell further behind reloads.
 * `load` reads every row of an embedder, calling `reserve` for each user before any `put` of theirs.
 */
export interface VectorStore {
  readonly kind: 'sqlite' | 'postgres';
  /** what reports show: the file, or the URL without its password */
  readonly where: string;
  /**
   * writes every point of every call, in order, in one transaction; the rowid of each point. Each call
   * replaces its ids' vectors under its embedder: parts of an id beyond the highest the call gives are
   * deleted.
   */
  upsert(batch: ReadonlyArray<{ tag: EmbedderTag; points: readonly VectorPoint[] }>, retain: number): Promise<Written<number[][]>>;
  /** deletes the user's ids under every embedder */
  delete(userId: string, ids: readonly string[], retain: number): Promise<Written<RemovedRow[]>>;
  /** deletes the user's (or session's) vectors, at most `rows` of them when given */
  deleteWhere(filter: VectorFilter, retain: number, rows?: number): Promise<Written<RemovedRow[]>>;
  deleteAll(retain: number): Promise<Written<number>>;
  deleteOtherEmbedders(keep: EmbedderTag, retain: number): Promise<Written<number>>;
  load(tag: EmbedderTag, reserve: (userId: string, n: number) => void, put: LoadPut): Promise<void>;
  /** the rows of these entries as they are now, every part of each (absent: deleted) */
  current(keys: readonly Change[]): Promise<Array<IndexRow & { embedder: string }>>;
  /** the rowids of the user's vectors of this embedder matching a retrieval filter */
  matching(tag: EmbedderTag, userId: string, where: RecordFilter): Promise<Set<number>>;
  byRowids(rowids: readonly number[]): Promise<Map<number, FullRow>>;
  /**
   * the whole-text rows (part 0) of the user's ids under the embedder: a passage row keeps no copy of
   * its turn's text, so a hit a passage won reports the payload of these
   */
  wholeRows(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Map<string, FullRow>>;
  /** which of the ids hold a whole-text vector (part 0) of this embedder */
  has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>>;
  /** entries (part 0 rows), not passages */
  count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number>;
  /** the newest change seq committed, and the newest pruned away */
  head(): Promise<{ head: number; pruned: number }>;
  since(seq: number, limit: number): Promise<Change[]>;
  /** rejects when the store cannot be reached */
  ping(): Promise<void>;
}

/** How many of the oldest changes a prune removes at once, at least: pruning is not paid per write. */
export const pruneStep = (retain: number): number => Math.max(1, Math.ceil(retain / 10));
