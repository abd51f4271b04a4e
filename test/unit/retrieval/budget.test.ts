import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withBudget } from '../../../src/retrieval/budget.js';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/**
 * What a tier budget bounds (docs/architecture.md, retrieval): the wait for asynchronous work, not
 * synchronous work in this process (SQLite), which a timer can neither interrupt nor skip.
 */
describe('tier budgets', () => {
  it('stop waiting for asynchronous work that is late', async () => {
    const late = new Promise<number>((resolve) => setTimeout(() => resolve(1), 500).unref());
    const r = await withBudget(() => late, 30, 0);
    assert.equal(r.status, 'timeout');
    assert.equal(r.value, 0);
    assert.ok(r.ms < 400, `waited ${r.ms} ms`);
  });

  it('abort the signal of work that is late, so that what it has not started yet is not done', async () => {
    let seen: AbortSignal | undefined;
    const r = await withBudget((signal) => ((seen = signal), new Promise<number>((resolve) => setTimeout(() => resolve(1), 200).unref())), 20, 0);
    assert.equal(r.status, 'timeout');
    assert.equal(seen!.aborted, true);
    assert.equal((seen!.reason as Error).name, 'TierBudgetSpent');
    const ok = await withBudget(async (signal) => ((seen = signal), 1), 1000, 0);
    assert.equal(ok.status, 'ok');
    assert.equal(seen!.aborted, false, 'work answered in time is not aborted');
  });

  it("abort the tier's signal with the caller's, and stop waiting at once: skipped, not a timeout or an error", async () => {
    let seen: AbortSignal | undefined;
    const caller = new AbortController();
    const reason = new Error('the client left');
    setTimeout(() => caller.abort(reason), 20);
    const started = performance.now();
    // work that ignores its signal: the pass still does not wait for it
    const r = await withBudget((signal) => ((seen = signal), new Promise<number>((resolve) => setTimeout(() => resolve(1), 1_000).unref())), 5_000, 0, caller.signal);
    assert.equal(r.status, 'skipped');
    assert.equal(r.value, 0);
    assert.ok(performance.now() - started < 500, `waited ${(performance.now() - started).toFixed(0)} ms`);
    assert.equal(seen!.aborted, true);
    assert.equal(seen!.reason, reason, "the caller's reason");
    // work that fails on its aborted signal is skipped too, not an error
    const again = new AbortController();
    setTimeout(() => again.abort(reason), 10);
    const failed = await withBudget((signal) => new Promise<number>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))), 5_000, 0, again.signal);
    assert.equal(failed.status, 'skipped');
    // a caller gone before the tier starts: the work is not started at all
    let started2 = false;
    const gone = await withBudget(async () => ((started2 = true), 1), 5_000, 0, caller.signal);
    assert.equal(gone.status, 'skipped');
    assert.equal(started2, false);
    // a caller still there changes nothing
    const ok = await withBudget(async (signal) => ((seen = signal), 2), 5_000, 0, new AbortController().signal);
    assert.deepEqual([ok.status, ok.value, seen!.aborted], ['ok', 2, false]);
  });

  it('cannot bound synchronous work: it runs to the end and its result is used', async () => {
    const r = await withBudget(async () => {
      busy(120);
      return 7;
    }, 20, 0);
    assert.equal(r.status, 'ok', 'the result was ready before the timer could fire');
    assert.equal(r.value, 7);
    assert.ok(r.ms >= 120, `took ${r.ms} ms`);
  });

  it('synchronous work in one tier holds up the others: nothing is answered or timed out while it runs', async () => {
    const started = performance.now();
    const [fast, sync] = await Promise.all([
      withBudget(() => new Promise<number>((resolve) => setTimeout(() => resolve(1), 5)), 20, 0),
      withBudget(async () => {
        busy(120);
        return 2;
      }, 20, 0),
    ]);
    assert.equal(sync.status, 'ok');
    assert.equal(fast.value, 1);
    assert.ok(performance.now() - started >= 120, 'the pass lasted as long as the synchronous work');
  });
});
