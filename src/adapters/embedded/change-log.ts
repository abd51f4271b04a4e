import type { Db } from '../sqlite/db.js';

export interface Change {
  seq: number;
  user_id: string;
  id: string;
  embedder: string;
}

/**
 * The `vector_changes` table (migration 3): triggers on `vectors` append one row per inserted,
 * updated or deleted vector, in the writer's own transaction, so every process sharing the file can
 * catch up on the others' writes by reading `seq > last seen` instead of reloading. `seq` is
 * AUTOINCREMENT: never reused, and with one writer at a time committed in order.
 *
 * The log is pruned to its newest `retain` rows; `pruned_through` tells a reader that fell further
 * behind that it must reload.
 */
export class ChangeLog {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      head: db.prepare(
        `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'), 0) AS head,
                (SELECT pruned_through FROM vector_changes_state) AS pruned`,
      ),
      since: db.prepare('SELECT seq, user_id, id, embedder FROM vector_changes WHERE seq > ? ORDER BY seq LIMIT ?'),
      prune: db.prepare('DELETE FROM vector_changes WHERE seq <= ?'),
      setPruned: db.prepare('UPDATE vector_changes_state SET pruned_through = max(pruned_through, ?)'),
    };
  }

  /** the newest seq ever written, and the newest seq pruned away */
  head(): { head: number; pruned: number } {
    return this.s.head.get() as { head: number; pruned: number };
  }

  since(seq: number, limit: number): Change[] {
    return this.s.since.all(seq, limit) as Change[];
  }

  /** Drops all but the newest `retain` changes, in steps of at least `step`; call inside a write. */
  prune(retain: number, step: number): void {
    const { head, pruned } = this.head();
    const through = head - retain;
    if (through - pruned < step) return;
    this.s.prune.run(through);
    this.s.setPruned.run(through);
  }
}

/**
 * Seq ranges this process wrote and already applied to its own memory, so catching up skips them.
 * Ranges are (from, to], merged when adjacent (a lone writer produces one range).
 */
export class OwnChanges {
  private ranges: Array<[number, number]> = [];

  add(from: number, to: number): void {
    if (to <= from) return;
    const last = this.ranges[this.ranges.length - 1];
    if (last && last[1] === from) last[1] = to;
    else this.ranges.push([from, to]);
  }

  has(seq: number): boolean {
    // ranges are ascending and disjoint: binary search for the last one starting below seq
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [from, to] = this.ranges[mid]!;
      if (seq <= from) hi = mid - 1;
      else if (seq > to) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** how many seqs in (from, to] are ours */
  countIn(from: number, to: number): number {
    let n = 0;
    for (const [a, b] of this.ranges) n += Math.max(0, Math.min(b, to) - Math.max(a, from));
    return n;
  }

  /** forgets ranges wholly at or below `seq` */
  dropThrough(seq: number): void {
    this.ranges = this.ranges.filter(([, to]) => to > seq);
  }

  clear(): void {
    this.ranges = [];
  }
}
