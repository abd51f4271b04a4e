import { room, sliceOver } from '../../pace.js';
import type { Db } from './db.js';

interface Pending {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Commits the small writes that concurrent jobs make in the same event-loop turn as one transaction.
 * A commit per turn (and a new FTS segment per commit) caps persist at a few thousand jobs a second;
 * one commit per batch costs about the same as one per row. When the batch fails, each write is
 * retried in a transaction of its own, so only the bad one rejects and the others still commit.
 *
 * A batch commits once the process's slice of work is spent (src/pace.ts) and the rest follows
 * after `room()`, ahead of writes queued since: 30 turns of 32,000 characters, each indexed with its
 * repeated words counted, were one transaction that held the event loop ~100 ms.
 */
export class TransactionBatcher {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 512,
  ) {}

  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    if (sliceOver()) return this.afterRoom();
    const batch = this.pending.splice(0);
    let results: unknown[];
    try {
      results = this.db
        .transaction(() => {
          const out: unknown[] = [];
          for (const p of batch) {
            out.push(p.fn());
            if (sliceOver()) break;
          }
          return out;
        })
        .immediate();
    } catch {
      for (const p of batch) {
        try {
          p.resolve(this.db.transaction(p.fn).immediate());
        } catch (err) {
          p.reject(err);
        }
      }
      return;
    }
    results.forEach((r, i) => batch[i]!.resolve(r));
    if (results.length === batch.length) return;
    this.pending.unshift(...batch.slice(results.length));
    this.afterRoom();
  }

  /** the writes pending, once the process's slice allows (src/pace.ts) */
  private afterRoom(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void room().then(() => this.flush());
  }
}
