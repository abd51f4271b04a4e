import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from '../../../../src/adapters/sqlite/db.js';
import { inSteps } from '../../../../src/adapters/sqlite/steps.js';

/**
 * A step of a long delete holds the event loop for its statements and then its commit, which writes
 * the pages they changed (FTS5's secure-delete: a prune's steps of 10 ms of deletes held it 24–28 ms
 * each). Time is simulated: each statement advances the clock 1 ms and each commit as long as its
 * statements took, so the steps' lengths do not depend on the machine's speed.
 */
describe('SQLite steps', () => {
  it('ends a step where its statements and its commit fill the slice', async (t) => {
    let simulated = 0;
    const realNow = performance.now.bind(performance);
    t.mock.method(performance, 'now', () => realNow() + simulated);
    const steps: Array<{ statements: number; total: number }> = [];
    const db = {
      transaction: (fn: () => boolean) => ({
        immediate: () => {
          const began = simulated;
          const done = fn();
          const statements = simulated - began;
          simulated += statements;
          steps.push({ statements, total: simulated - began });
          return done;
        },
      }),
    } as unknown as Db;
    let left = 60;
    await inSteps(db, () => {
      simulated += 1;
      return --left > 0;
    }, 10);

    assert.equal(left, 0, 'every row was deleted');
    assert.ok(steps.length >= 6, `${steps.length} steps`);
    for (const s of steps) assert.ok(s.total <= 12, `a step held the event loop ${s.total.toFixed(1)} ms (${s.statements.toFixed(1)} of statements) with a slice of 10`);
  });
});
