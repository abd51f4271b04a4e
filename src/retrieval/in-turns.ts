import { setImmediate as nextTurn } from 'node:timers/promises';

/** how long a pass computes before it gives the event loop a turn */
export const TURN_MS = 8;

/**
 * Runs `each` over the items, giving the event loop a turn whenever it has run `ms` since the last
 * one. A turn, not a pause (pace.ts): the request doing this work waits through whatever it lets in.
 * `now`: the clock (tests give their own: a shared machine's scheduler moves the real one).
 */
export async function inTurns<T>(items: Iterable<T>, each: (item: T) => void, ms = TURN_MS, now = () => performance.now()): Promise<void> {
  let started = now();
  for (const item of items) {
    each(item);
    if (now() - started >= ms) {
      await nextTurn();
      started = now();
    }
  }
}
