/**
 * Memory ids are their user's, so stores take one user's ids at a time: this groups anything that
 * names a user (turns, entries, refs) by it, in first-seen order.
 */
export function byUser<T extends { user_id: string }>(items: Iterable<T>): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.user_id);
    if (list) list.push(item);
    else out.set(item.user_id, [item]);
  }
  return out;
}
