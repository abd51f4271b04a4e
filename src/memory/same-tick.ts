/**
 * Gathers the items handed in during one event-loop turn and runs them as one batch, every caller
 * of the batch getting its one result. Concurrent accepts finish together (their appends share a
 * group commit), and what follows the commit — the short-term write, the jobs — costs a round trip
 * and a Redis pipeline per batch instead of per request.
 */
export class SameTick<I, R> {
  private items: I[] = [];
  private waiting: Array<{ resolve: (r: R) => void; reject: (e: unknown) => void }> = [];

  constructor(private readonly run: (items: readonly I[]) => Promise<R>) {}

  add(items: readonly I[]): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => void this.flush());
      this.items.push(...items);
      this.waiting.push({ resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const items = this.items;
    const waiting = this.waiting;
    this.items = [];
    this.waiting = [];
    try {
      const r = await this.run(items);
      for (const w of waiting) w.resolve(r);
    } catch (err) {
      for (const w of waiting) w.reject(err);
    }
  }
}
