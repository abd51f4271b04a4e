import { isUnavailable } from './pool.js';

/** A batch's answer to one call that fails alone while the others succeed (the batch is not retried). */
export class Rejected {
  constructor(readonly error: unknown) {}
}

interface Pending<I, O> {
  input: I;
  resolve: (v: O) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs the calls made in one event-loop turn as one batch: `run(inputs)` answers all of them with
 * one statement (one round trip, one commit) instead of one each. Concurrent jobs (64 per queue by
 * default) make many small writes at once; on PostgreSQL each would pay a round trip and a WAL flush.
 * When a batch fails for a reason other than the database being away, each call is retried alone, so
 * only the bad one rejects.
 */
export class Coalescer<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;

  constructor(
    private readonly run: (inputs: readonly I[]) => Promise<Array<O | Rejected>>,
    private readonly maxBatch = 500,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    try {
      const out = await this.run(batch.map((p) => p.input));
      batch.forEach((p, i) => settle(p, out[i]!));
    } catch (err) {
      if (batch.length === 1 || isUnavailable(err)) return batch.forEach((p) => p.reject(err));
      for (const p of batch) {
        try {
          const [one] = await this.run([p.input]);
          settle(p, one!);
        } catch (e) {
          p.reject(e);
        }
      }
    }
  }
}

function settle<I, O>(p: Pending<I, O>, out: O | Rejected): void {
  if (out instanceof Rejected) p.reject(out.error);
  else p.resolve(out);
}
