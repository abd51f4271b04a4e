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
 * Runs one tier's read under its time budget. Over budget or failed, the tier is skipped for this
 * call (its late answer is dropped) and the outcome says why; the pass never waits past the budget.
 * `signal` aborts when the budget runs out: work not yet started for the tier (a search waiting for
 * the text-search thread, a scan after the index's load) is then not done at all, since nobody waits
 * for its answer (under load, work of abandoned passes otherwise ran anyway, ahead of live ones).
 */
export async function withBudget<T>(work: (signal: AbortSignal) => Promise<T>, budgetMs: number, empty: T): Promise<TierOutcome<T>> {
  const started = performance.now();
  const spent = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      spent.abort(new TierBudgetSpent(budgetMs));
      resolve('timeout');
    }, budgetMs);
  });
  try {
    const outcome = await Promise.race([work(spent.signal), timeout]);
    const ms = performance.now() - started;
    if (outcome === 'timeout') return { status: 'timeout', ms, value: empty };
    return { status: 'ok', ms, value: outcome as T };
  } catch (err) {
    return { status: 'error', ms: performance.now() - started, value: empty, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
