/**
 * Marks of deleted or replaced texts, kept where an embed worker without the durable store can read
 * them (the shared Redis): such a worker cannot ask the turn log whether the memory it embeds still
 * exists (docs/architecture.md, embed workers without the durable store).
 *
 * Contract: the deleting side calls `bury` (or `supersede`) before it removes the memory's vectors;
 * the worker calls `isBuried` before its upsert (to skip) and after it (to remove what it wrote).
 * Either the mark is visible to the worker's second check, or the deleter's vector removal comes after
 * the worker's upsert — so no vector of a buried text survives. Marks expire after `ttlSeconds`: a job
 * that waits longer than that (or a failed one retried by hand later) is not covered. Ids are the
 * user's own. Not covered: erasures by scope (forget, clear), which remove the jobs themselves and
 * wait for running ones (docs/architecture.md, maintenance).
 */
export interface Tombstones {
  /** how long a mark is kept */
  readonly ttlSeconds: number;
  /** the memories are gone: every text each id held (`hash`: only that text; null: any) */
  bury(userId: string, memories: ReadonlyArray<{ id: string; hash: string | null }>): Promise<void>;
  /** the memory's text `oldHash` was replaced by `newHash` (an edit; an edit back to an earlier text revives it) */
  supersede(userId: string, id: string, oldHash: string, newHash: string): Promise<void>;
  /** whether the text `hash` of the memory is gone */
  isBuried(userId: string, id: string, hash: string): Promise<boolean>;
}
