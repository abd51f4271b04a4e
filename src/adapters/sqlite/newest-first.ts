/**
 * A word's matches read from the newest down, as far as a search needs them: `rowids` descending,
 * every match at or above the last one held. An older stretch is read only when the merge below
 * reaches the end of what is held.
 */
export interface Descending {
  /** grows in place (more): a merge keeps its place in it */
  readonly rowids: readonly number[];
  /** no match is older than the last rowid held */
  complete: boolean;
  /** reads older matches onto the end of `rowids`, or finds there are none (`complete`) */
  more(): void;
}

/** A list read whole (ascending), as a Descending. */
export function wholeList(ascending: readonly number[]): Descending {
  return { rowids: [...ascending].reverse(), complete: true, more() {} };
}

/** the first index of descending `list` whose rowid is at or below `rowid` */
export function indexAtOrBelow(list: readonly number[], rowid: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! > rowid) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The union of the lists' rowids, newest first, within `span`: each call hands back the next `n`
 * distinct rowids (fewer once none is left). A list whose held rows are all handed back reads older
 * ones before the next rowid is chosen, so every rowid handed back is one of every list that holds it.
 * A query's words' lists are merged here rather than by an FTS5 OR query walked newest first, which
 * decoded every word's matches again at every search.
 */
export function newestFirst(lists: readonly Descending[], span: { from: number; to: number }): (n: number) => number[] {
  const rows = lists.map((list) => list.rowids);
  // each list's next rowid to hand back, from the top of the span down
  const at = lists.map((list, i) => {
    while (!list.complete && (rows[i]!.length === 0 || rows[i]![rows[i]!.length - 1]! > span.to)) list.more();
    return indexAtOrBelow(rows[i]!, span.to);
  });
  return (n) => {
    const out: number[] = [];
    while (out.length < n) {
      let top = -1;
      for (let i = 0; i < rows.length; i++) {
        const held = rows[i]!;
        const a = at[i]!;
        if (a === held.length) {
          const list = lists[i]!;
          while (!list.complete && a === held.length) list.more();
          if (a === held.length) continue;
        }
        if (held[a]! > top) top = held[a]!;
      }
      if (top < span.from) break;
      for (let i = 0; i < rows.length; i++) if (rows[i]![at[i]!] === top) at[i]!++;
      out.push(top);
    }
    return out;
  };
}

/** The ascending rowids of `list` from `from` to `to`, both included (all of them held: see newestFirst). */
export function ascendingWithin(list: Descending, from: number, to: number): number[] {
  return list.rowids.slice(indexAtOrBelow(list.rowids, to), indexAtOrBelow(list.rowids, from - 1)).reverse();
}
