// The rowids each query word matched, kept by a connection between searches. A chat's messages repeat
// their words, and the words a message's feedback search adds (retrieval/feedback.ts) come from the same
// few sessions message after message; read afresh, each was one FTS5 query and its JSON array again.
// A big user's search of its newest matches merges the same lists (bm25.ts, newestMatches).
// Kept, a word's list is read again only past the newest row it was read through: an insert takes a
// rowid above every row there is, so a list read through row R misses nothing at or below R. An entry
// whose text, owner or session changes, or that goes, moves `entry_changes`, and MatchRecords.refresh
// then has everything here dropped (clear), in the same snapshot as the search reads.

/**
 * rowids kept in all (8 bytes each): past it the lists used least recently go, read again when next
 * searched (dropped all at once, 100k real turns of one user had every list read again every ~270
 * messages). What UserBm25 derives of each list lives as long: a reference to each of the user's
 * matches (8 bytes) and, for each word counted, 8 bytes a row — about twice as much again in all
 */
const MAX_ROWIDS = 1_000_000;

interface Kept {
  rowids: number[];
  /** the newest rowid of the table when the list was read */
  through: number;
}

export class KeptPostings {
  /** the least recently used first */
  private readonly lists = new Map<string, Kept>();
  private held = 0;

  constructor(private readonly maxRowids = MAX_ROWIDS) {}

  clear(): void {
    this.lists.clear();
    this.held = 0;
  }

  /**
   * The ascending rowids of `key`'s matches, the first `limit` (0: all), as of `newest` (the table's
   * newest rowid in the caller's snapshot). `read(after)` reads the matches above rowid `after`,
   * ascending, at most `limit` (0: all).
   */
  matches(key: string, newest: number, limit: number, read: (after: number) => number[]): number[] {
    const kept = this.lists.get(key);
    if (kept && (kept.through >= newest || (limit > 0 && kept.rowids.length >= limit))) {
      this.lists.delete(key);
      this.lists.set(key, kept);
      return kept.rowids;
    }
    const more = read(kept?.through ?? 0);
    let rowids = kept && more.length > 0 ? kept.rowids.concat(more) : (kept?.rowids ?? more);
    if (limit > 0 && rowids.length > limit) rowids = rowids.slice(0, limit);
    if (rowids.length > this.maxRowids) return rowids;
    // the list read now takes the place of what was kept of it; the least recently used others go
    // until it fits (a Map's first keys: the few left by deletes are walked once a miss, which reads
    // the index anyway)
    if (kept) {
      this.lists.delete(key);
      this.held -= kept.rowids.length;
    }
    for (const [k, gone] of this.lists) {
      if (this.held + rowids.length <= this.maxRowids) break;
      this.lists.delete(k);
      this.held -= gone.rowids.length;
    }
    this.lists.set(key, { rowids, through: newest });
    this.held += rowids.length;
    return rowids;
  }
}
