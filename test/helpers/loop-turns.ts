/** Turns of the event loop counted by a setImmediate chain, from now until `stop()`. */
export interface TurnCounter {
  readonly turns: number;
  /** ends the chain; the turns counted */
  stop(): number;
}

/** Starts counting the event loop's turns; `onTurn` is called at each with the count so far. */
export function countTurns(onTurn?: (turns: number) => void): TurnCounter {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    onTurn?.(turns);
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop() {
      done = true;
      return turns;
    },
  };
}

/** The event loop's turns while `work` runs. */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  const counter = countTurns();
  await work();
  return counter.stop();
}
