import { connectionWaiting, turn } from '../pace.js';

/** how long a pass computes before it gives the event loop a turn */
export const TURN_MS = 8;

/**
 * A pass's clock of its turns: it gives the event loop a turn (pace.ts, turn) once it has run `ms`
 * since it began or since its last turn. Time it spent waiting counts as work: a turn too many costs
 * the pass one turn of the loop, a turn too few costs every request behind it (the process's slice
 * begins lazily, at the first look after the loop turned, and missed work a pass did right after a
 * wait inside a tier). `now`: the clock (tests give their own: a shared machine's scheduler moves the
 * real one).
 */
export class Turns {
  private since: number;

  constructor(private readonly ms = TURN_MS, private readonly now = () => performance.now()) {
    this.since = now();
  }

  /** whether the pass has run its slice, or a connection that has just arrived waits to be read (pace.ts, arriving) */
  get due(): boolean {
    return this.now() - this.since >= this.ms || connectionWaiting();
  }

  /** a turn of the event loop, and a new slice after it */
  async turn(): Promise<void> {
    await turn();
    this.since = this.now();
  }

  /** a turn once the pass has run its slice */
  async ifDue(): Promise<void> {
    if (this.due) await this.turn();
  }
}

/**
 * Runs `each` over the items, giving the event loop a turn whenever the pass has run its slice
 * (`turns`, counted from before the call: the pass's steps before it count). A turn, not a pause
 * (pace.ts): the request doing this work waits through whatever it lets in.
 */
export async function inTurns<T>(items: Iterable<T>, each: (item: T) => void, turns: Turns): Promise<void> {
  for (const item of items) {
    if (turns.due) await turns.turn();
    each(item);
  }
}
