import { room, SLICE_MS, sliceOver } from '../../pace.js';
import type { Db } from './db.js';

interface Pending {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** the writes of one kind waiting for their commit, and whether a flush of them is on its way */
interface Lane {
  pending: Pending[];
  scheduled: boolean;
}

/**
 * Commits the small writes that concurrent requests and jobs make as one transaction. A commit per
 * turn (and a new FTS segment per commit) caps persist at a few thousand jobs a second; one commit per
 * batch costs about the same as one per row. When the batch fails, each write is retried in a
 * transaction of its own, so only the bad one rejects and the others still commit.
 *
 * Two lanes. `run`: a write someone waits on (a turn's append, a job's mark), committed in
 * the next turn of the event loop in a transaction of such writes alone, however much of the
 * process's slice of work (src/pace.ts) the jobs have spent. `later`: a job's entries and vectors,
 * committed after them. In one lane, a single-turn write's append waited behind a batch of jobs'
 * entries and vectors, their commit and its pages, and then behind the pause their slice had earned
 * (docs/bench-report.md, round 40).
 *
 * A batch stops once it has run a slice (the jobs': the process's) and the rest follows after
 * `room()`, ahead of writes queued since: 30 turns of 32,000 characters, each indexed with its
 * repeated words counted, were one transaction that held the event loop ~100 ms.
 */
export class TransactionBatcher {
  private readonly now: Lane = { pending: [], scheduled: false };
  private readonly soon: Lane = { pending: [], scheduled: false };
  /** the `later` writes are due but wait for the `run` writes pending to commit first */
  private soonAfterNow = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 512,
  ) {}

  /** `fn` in the next commit: for a write a client (or a caller) is waiting on */
  run<T>(fn: () => T): Promise<T> {
    return this.add(this.now, fn);
  }

  /** `fn` in a commit after the `run` writes waiting when it is due: for what a job has worked out */
  later<T>(fn: () => T): Promise<T> {
    return this.add(this.soon, fn);
  }

  /** commits everything waiting, now (before the connection closes) */
  drain(): void {
    for (const lane of [this.now, this.soon]) while (lane.pending.length > 0) this.commit(lane, lane.pending.splice(0));
    if (this.soonAfterNow) this.soonAfterNow = this.soon.scheduled = false;
  }

  private add<T>(lane: Lane, fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      lane.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (lane.pending.length >= this.maxBatch) this.flush(lane);
      else if (!lane.scheduled) {
        lane.scheduled = true;
        setImmediate(() => this.flush(lane));
      }
    });
  }

  private flush(lane: Lane, waited = false): void {
    lane.scheduled = false;
    if (lane.pending.length > 0) {
      // the writes waited on go first, in a transaction of their own, whose flush sends these after
      // it: once, or a steady stream of requests would hold them back for good
      if (lane === this.soon && !waited && this.now.pending.length > 0) {
        lane.scheduled = this.soonAfterNow = true;
        return;
      }
      // a write someone waits on is not held back by the slice the jobs have spent
      if (lane === this.soon && sliceOver()) return this.afterRoom(lane);
      this.commit(lane, lane.pending.splice(0));
    }
    if (lane === this.now && this.now.pending.length === 0 && this.soonAfterNow) {
      this.soonAfterNow = false;
      setImmediate(() => this.flush(this.soon, true));
    }
  }

  /** `batch` in one transaction, as much of it as a slice allows; the rest goes back to the front of its lane */
  private commit(lane: Lane, batch: Pending[]): void {
    const began = performance.now();
    // the writes waited on: as long as a slice of their own; the jobs': within the process's slice
    const over = lane === this.now ? () => performance.now() - began >= SLICE_MS / 2 : () => sliceOver();
    let results: unknown[];
    try {
      results = this.db
        .transaction(() => {
          const out: unknown[] = [];
          for (const p of batch) {
            out.push(p.fn());
            if (over()) break;
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
    lane.pending.unshift(...batch.slice(results.length));
    this.afterRoom(lane);
  }

  /** the lane's writes, once the process's slice allows (src/pace.ts) */
  private afterRoom(lane: Lane): void {
    if (lane.scheduled) return;
    lane.scheduled = true;
    void room().then(() => this.flush(lane));
  }
}
