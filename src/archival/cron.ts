import { Cron } from 'croner';

/**
 * Cron helpers shared by config validation, the in-process scheduler and `doctor`. Patterns have 5
 * fields (minute precision) or 6 (seconds first); BullMQ's parser reads the same forms.
 */

/** Why a pattern or timezone is unusable, or null when it is fine. */
export function cronProblem(pattern: string, timezone = 'UTC'): string | null {
  try {
    new Cron(pattern, { timezone, paused: true, mode: '5-or-6-parts' }).nextRun();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return null;
  } catch {
    return `unknown IANA timezone "${timezone}" (for example "UTC" or "Europe/Paris")`;
  }
}

/** The next `n` occurrences after `from`. */
export function nextRuns(pattern: string, timezone: string, n = 1, from: Date = new Date()): Date[] {
  return new Cron(pattern, { timezone, paused: true, mode: '5-or-6-parts' }).nextRuns(n, from);
}
