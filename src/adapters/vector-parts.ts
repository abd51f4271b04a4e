import type { VectorPoint } from '../ports/vector-index.js';

/**
 * The highest part each (user, id) of one upsert call gives: the store deletes the id's parts beyond
 * it, so a call replaces the entry's vectors under its embedder.
 */
export function lastParts(points: readonly VectorPoint[]): Array<{ user_id: string; id: string; last: number }> {
  const byKey = new Map<string, { user_id: string; id: string; last: number }>();
  for (const p of points) {
    const k = `${p.payload.user_id}\u0000${p.id}`;
    const held = byKey.get(k);
    if (!held) byKey.set(k, { user_id: p.payload.user_id, id: p.id, last: p.part ?? 0 });
    else held.last = Math.max(held.last, p.part ?? 0);
  }
  return [...byKey.values()];
}
