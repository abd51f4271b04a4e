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
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    let results: unknown[];
    try {
      results = this.db.transaction(() => batch.map((p) => p.fn())).immediate();
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
    batch.forEach((p, i) => p.resolve(results[i]));
  }
}
