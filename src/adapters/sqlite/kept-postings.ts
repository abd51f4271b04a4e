// The rowids each query word matched, kept by a connection between searches. A chat's messages repeat
// their words, and the words a message's feedback search adds (retrieval/feedback.ts) come from the same
// few sessions message after message; read afresh, each was one FTS5 query and its JSON array again.
// A big user's search of its newest matches reads each word's matches from the newest down, only as
// far as its merge needs (bm25.ts, newestMatches): those are kept too, newest first, and read further
// down by a later search that needs more.
// Kept, a word's list is read again only past the newest row it was read through: an insert takes a
// rowid above every row there is, so a list read through row R misses nothing at or below R. An entry
// whose text, owner or session changes, or that goes, moves `entry_changes`, and MatchRecords.refresh
// then has everything here dropped (clear), in the same snapshot as the search reads.

import type { Descending } from './newest-first.js';

/**
 * rowids kept in all (8 bytes each): past it the lists used least recently go, read again when next
 * searched (dropped all at once, 100k real turns of one user had every list read again every ~270
 * messages). What UserBm25 derives of each list lives as long: a reference to each of the user's
 * matches (8 bytes) and, for each word counted, 8 bytes a row — about twice as much again in all
 */
const MAX_ROWIDS = 1_000_000;

interface Kept {
  /** ascending, or newest first (newestOf) */
  rowids: number[];
  /** the newest rowid of the table when the list was read */
  through: number;
  /** newestOf's: no match is older than the last rowid held */
  complete?: boolean;
}

/** the newest matches of a word read at first (newestOf), and at least as many more each time a merge needs older ones */
const FIRST_NEWEST = 64;

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
    this.keep(key, kept, { rowids, through: newest });
    return rowids;
  }

  /**
   * `key`'s matches as of `newest`, newest first: what is kept of them, at least the newest
   * FIRST_NEWEST, and read further down as the caller's merge asks (Descending.more), at least as
   * many again each time; what is read is kept. `readAbove(after)`: the matches above rowid `after`,
   * ascending; `readBelow(below, n)`: the newest `n` below rowid `below`, newest first.
   */
  newestOf(key: string, newest: number, readAbove: (after: number) => number[], readBelow: (below: number, n: number) => number[]): Descending {
    const kept = this.lists.get(key);
    let list: Kept;
    if (!kept) {
      const rowids = readBelow(newest + 1, FIRST_NEWEST);
      list = { rowids, through: newest, complete: rowids.length < FIRST_NEWEST };
    } else if (kept.through < newest) {
      const above = readAbove(kept.through);
      list = { rowids: above.length > 0 ? above.reverse().concat(kept.rowids) : kept.rowids, through: newest, complete: kept.complete };
    } else {
      list = kept;
    }
    this.keep(key, kept, list);
    const out: Descending = {
      rowids: list.rowids,
      complete: list.complete === true,
      more: () => {
        if (list.complete) return;
        // a power of two: each is a statement of its own (bm25.ts, phraseStatement)
        let want = FIRST_NEWEST;
        while (want < list.rowids.length) want *= 2;
        const older = list.rowids.length > 0 ? readBelow(list.rowids[list.rowids.length - 1]!, want) : [];
        out.complete = list.complete = older.length < want;
        for (const r of older) list.rowids.push(r);
        // held by the map still (not gone since): counted, and the others make room
        if (this.lists.get(key) === list) {
          this.held += older.length;
          this.keep(key, list, list);
        }
      },
    };
    return out;
  }

  /**
   * `list` kept as `key`'s, in place of `was` (what was kept of it, as counted in `held`), the newest
   * used; the least recently used others go until it fits (a Map's first keys: the few left by deletes
   * are walked once a miss, which reads the index anyway).
   */
  private keep(key: string, was: Kept | undefined, list: Kept): void {
    if (was) {
      this.lists.delete(key);
      this.held -= was.rowids.length;
    }
    if (list.rowids.length > this.maxRowids) return;
    for (const [k, gone] of this.lists) {
      if (this.held + list.rowids.length <= this.maxRowids) break;
      this.lists.delete(k);
      this.held -= gone.rowids.length;
    }
    this.lists.set(key, list);
    this.held += list.rowids.length;
  }
}
