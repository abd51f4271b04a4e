export type TierStatus = 'ok' | 'timeout' | 'error' | 'skipped';

export interface TierOutcome<T> {
  status: TierStatus;
  ms: number;
  value: T;
  error?: string;
}

/**
 * Runs one tier's read under its time budget. Over budget or failed, the tier is skipped for this
 * call (its late answer is dropped) and the outcome says why; the pass never waits past the budget.
 */
export async function withBudget<T>(work: () => Promise<T>, budgetMs: number, empty: T): Promise<TierOutcome<T>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budgetMs);
  });
  try {
    const outcome = await Promise.race([work(), timeout]);
    const ms = performance.now() - started;
    if (outcome === 'timeout') return { status: 'timeout', ms, value: empty };
    return { status: 'ok', ms, value: outcome as T };
  } catch (err) {
    return { status: 'error', ms: performance.now() - started, value: empty, error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
