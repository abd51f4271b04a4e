/** Default job options for every backend: retried with exponential backoff, bounded history. */
export const JOB_DEFAULTS = {
  attempts: 5,
  backoffMs: 1000,
  /** completed jobs kept for inspection */
  keepCompleted: 1000,
  /** failed jobs kept for inspection and retry */
  keepFailed: 10_000,
} as const;
