import { RequestAbortedError } from '../errors.js';

export type TierStatus = 'ok' | 'timeout' | 'error' | 'skipped';

export interface TierOutcome<T> {
  status: TierStatus;
  ms: number;
  value: T;
  error?: string;
}

/** why a tier's `signal` aborts: its budget ran out and the pass no longer waits for its answer */
export class TierBudgetSpent extends Error {
  constructor(budgetMs: number) {
    super(`the tier's budget of ${budgetMs} ms ran out`);
    this.name = 'TierBudgetSpent';
  }
}

/**
 * Throws a `RequestAbortedError` once `signal` (the caller's: an HTTP client that left) has aborted:
 * the pass stops where it is. The signal's own reason when it is one already, else one caused by it.
 */
export function throwIfAbandoned(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  throw reason instanceof RequestAbortedError ? reason : new RequestAbortedError(undefined, { cause: reason });
}

/**
 * Runs one tier's read under its time budget. Over budget or failed, the tier is skipped for this
 * call (its late answer is dropped) and the outcome says why; the pass never waits past the budget.
 * `signal` aborts when the budget runs out: work not yet started for the tier (a text search, a
 * scan after the index's load) is then not done at all, since nobody waits
 * for its answer (under load, work of abandoned passes otherwise ran anyway, ahead of live ones).
 *
 * `abandoned`, the caller's signal (an HTTP client that closed its connection), aborts the tier's
 * signal too, with its reason, and the pass stops waiting at once: the outcome is then `skipped`
 * with `empty`, and work not started is not done. Already aborted, the work is not started at all.
 */
export async function withBudget<T>(work: (signal: AbortSignal) => Promise<T>, budgetMs: number, empty: T, abandoned?: AbortSignal): Promise<TierOutcome<T>> {
  const started = performance.now();
  if (abandoned?.aborted) return { status: 'skipped', ms: 0, value: empty };
  const spent = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbandoned: (() => void) | undefined;
  const timeout = new Promise<'timeout' | 'abandoned'>((resolve) => {
    timer = setTimeout(() => {
      spent.abort(new TierBudgetSpent(budgetMs));
      resolve('timeout');
    }, budgetMs);
    if (abandoned) {
      onAbandoned = () => {
        spent.abort(abandoned.reason);
        resolve('abandoned');
      };
      abandoned.addEventListener('abort', onAbandoned, { once: true });
    }
  });
  try {
    const outcome = await Promise.race([work(spent.signal), timeout]);
    const ms = performance.now() - started;
    // whichever settled first, a caller that left wants no answer (the work may have failed on its signal)
    if (outcome === 'abandoned' || abandoned?.aborted) return { status: 'skipped', ms, value: empty };
    if (outcome === 'timeout') return { status: 'timeout', ms, value: empty };
    return { status: 'ok', ms, value: outcome as T };
  } catch (err) {
    if (abandoned?.aborted) return { status: 'skipped', ms: performance.now() - started, value: empty };
    return { status: 'error', ms: performance.now() - started, value: empty, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
    if (onAbandoned) abandoned!.removeEventListener('abort', onAbandoned);
  }
}
