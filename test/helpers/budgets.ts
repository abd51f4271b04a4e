/**
 * Generous tier budgets for test processes that check what is stored and found: on a loaded machine a
 * tier skipped over its budget (100 ms for short-term, across the cluster's IPC) would hide it.
 */
export const GENEROUS_BUDGETS = { NEURALCLEAVE_SHORT_TERM_BUDGET_MS: '10000', NEURALCLEAVE_SEMANTIC_BUDGET_MS: '10000', NEURALCLEAVE_LONG_TERM_BUDGET_MS: '10000' };
