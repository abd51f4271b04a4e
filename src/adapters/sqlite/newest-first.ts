/** the first index of ascending `list` whose rowid is above `rowid` */
export function indexAbove(list: readonly number[], rowid: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! <= rowid) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The union of ascending rowid lists, newest first, within `span`: each call hands back the next `n`
 * distinct rowids (fewer once none is left). A query's words' lists are merged here rather than by an
 * FTS5 OR query walked newest first, which decoded every word's matches again at every search.
 */
export function newestFirst(lists: ReadonlyArray<readonly number[]>, span: { from: number; to: number }): (n: number) => number[] {
  // each list's next rowid to hand back, from the top of the span down
  const at = lists.map((list) => indexAbove(list, span.to) - 1);
  return (n) => {
    const out: number[] = [];
    while (out.length < n) {
      let top = -1;
      for (let i = 0; i < lists.length; i++) if (at[i]! >= 0 && lists[i]![at[i]!]! > top) top = lists[i]![at[i]!]!;
      if (top < span.from) break;
      for (let i = 0; i < lists.length; i++) if (at[i]! >= 0 && lists[i]![at[i]!] === top) at[i]!--;
      out.push(top);
    }
    return out;
  };
}
