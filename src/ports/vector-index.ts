import type { RecordFilter } from '../domain/filters.js';
import type { VectorPayload } from '../domain/record.js';

export type { VectorPayload } from '../domain/record.js';

/** Which embedder produced a vector. Vectors of different tags are never compared. */
export interface EmbedderTag {
  id: string;
  dim: number;
}

export interface VectorPoint {
  id: string;
  /**
   * 0 or absent: the entry's whole text; n ≥ 1: the n-th passage of a long turn
   * (src/embedding/passages.ts), which an embedder with a short window would not read otherwise
   */
  part?: number;
  vector: Float32Array;
  payload: VectorPayload;
}

export interface VectorHit {
  id: string;
  /** cosine similarity, -1..1: the best of the entry's vectors */
  score: number;
  /** which of the entry's vectors scored it: 0 the whole text, n ≥ 1 its n-th passage */
  part: number;
  payload: VectorPayload;
}

export interface VectorFilter {
  user_id: string;
  session_id?: string;
}

/** A search's scope: the user (and session), and a retrieval filter applied before the cut to k. */
export interface VectorSearchFilter extends VectorFilter {
  where?: RecordFilter;
}

/**
 * Semantic tier: vectors of turns (and summaries), each tagged with its embedder.
 *
 * Contract: a vector is keyed by (payload.user_id, id, embedder, part): two users' equal ids are two
 * vectors, and `has`/`delete` name the user. An entry is its id: part 0 is its whole text, parts 1…n
 * the passages of a long turn. `upsert` is idempotent and replaces the entry: the points of one id in
 * one call are all its vectors under that embedder, and parts of it beyond the highest given are
 * removed (an edit to a shorter text leaves no passage of the old one). `search` returns at most `k`
 * entries — each id once, scored by its best vector, with that vector's part — of the given embedder
 * only, restricted to the filter's user (and session) and, when `where` is given, to the vectors
 * matching it — the best k among those, never the best k cut and then filtered — best first, by cosine
 * similarity. `has` and `count` count entries (their part 0), not passages; deletes remove every part
 * of the id under every embedder. Vectors of the wrong dimension are rejected. Not covered: embedding
 * (callers pass vectors) and text search.
 */
export interface VectorIndex {
  readonly backend: 'embedded' | 'qdrant';
  upsert(tag: EmbedderTag, points: readonly VectorPoint[]): Promise<void>;
  /** `signal`: aborts once the caller no longer waits (its tier budget ran out, or the pass's caller left); work not started by then may be skipped, the promise then rejecting with its reason */
  search(tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, k: number, signal?: AbortSignal): Promise<VectorHit[]>;
  /** which of the user's `ids` hold a vector of this embedder */
  has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>>;
  /** deletes the user's `ids` under every embedder */
  delete(userId: string, ids: readonly string[]): Promise<void>;
  /** deletes every vector of a user (or of one session); returns how many entries were removed when known */
  deleteWhere(filter: VectorFilter): Promise<number>;
  deleteAll(): Promise<void>;
  /** deletes every vector not of `keep` (after a reindex to a new model); returns how many were removed */
  deleteOtherEmbedders(keep: EmbedderTag): Promise<number>;
  count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
