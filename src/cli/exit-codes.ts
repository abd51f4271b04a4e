/**
 * The exit codes of every `neuralcleave` command, defined once (the README's table is this one):
 * - 0 `ok`: the command did what it was asked;
 * - 1 `failure`: it ran but could not do it — nothing matched (an unknown id, a user or session with
 *   nothing stored), a backend failed, an erasure is incomplete, a health check failed;
 * - 2 `usage`: it did not run — a bad flag or argument, an invalid value, a configuration error, a
 *   destructive command without confirmation.
 * A reason is printed on stderr as one line for 1 and 2.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
