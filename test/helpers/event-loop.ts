import { mergeWork } from '../../src/compaction/cl100k.js';

/** the tokenizer's merging work (pairs taken off a heap: src/compaction/cl100k.ts, mergeWork) `fn` does */
export function merging(fn: () => void): number {
  const before = mergeWork();
  fn();
  return mergeWork() - before;
}

/**
 * Runs `fn` while a setImmediate chain hears, at each turn of the event loop, the tokenizer's merging
 * work done since the previous one: what one turn of the loop held, measured in work, not time.
 * Resolves once the chain has stopped too, with the most work one turn did and how many turns passed.
 */
export async function mergingPerTurn(fn: () => Promise<void>): Promise<{ most: number; turns: number }> {
  let done = false;
  let mark = mergeWork();
  let most = 0;
  let turns = 0;
  let stopped!: () => void;
  const chain = new Promise<void>((resolve) => (stopped = resolve));
  const tick = () => {
    most = Math.max(most, mergeWork() - mark);
    turns++;
    mark = mergeWork();
    if (done) stopped();
    else setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await fn();
  } finally {
    done = true;
    await chain;
  }
  return { most, turns };
}
