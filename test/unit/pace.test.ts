import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pause, room, SLICE_MS, sliceSpent } from '../../src/pace.js';
import { turnsDuring } from '../helpers/loop-turns.js';

const busy = (ms: number) => {
  for (const until = performance.now() + ms; performance.now() < until; );
};

/**
 * A new slice and `ms` of work in it, begun again when the process was descheduled meanwhile: a slice
 * is wall time, and on a loaded machine (eight test processes on two cores) the checks below would
 * measure the scheduler, not the pace
 */
async function sliceAfter(ms: number): Promise<void> {
  for (let tries = 1; ; tries++) {
    await pause();
    busy(ms);
    if (sliceSpent() < ms + 2 || tries === 20) return;
  }
}

/**
 * The process's slices of work: `room()` gives the event loop nothing while the slice is young, and
 * pauses once it has run SLICE_MS, whoever spent it; a pause starts a new slice.
 */
describe('pace: the slices long jobs share', () => {
  it('gives no turn inside a slice, a pause once it is spent, and starts a new one after', async () => {
    await sliceAfter(0);
    assert.ok(sliceSpent() < SLICE_MS, 'a pause starts a slice');
    assert.equal(await turnsDuring(() => room()), 0, 'a young slice goes on');
    busy(SLICE_MS);
    const started = performance.now();
    const turns = await turnsDuring(() => room());
    assert.ok(turns >= 1, 'a spent slice pauses');
    assert.ok(performance.now() - started >= SLICE_MS - 1, 'for as long as a slice');
    assert.ok(sliceSpent() < SLICE_MS);
  });

  it('is one slice for every job of the process: what one spent, the next does not spend again', async () => {
    await sliceAfter(SLICE_MS / 5);
    // another job's room() after part of a slice of the first's work: no pause yet
    assert.equal(await turnsDuring(() => room()), 0);
    busy(SLICE_MS - SLICE_MS / 5);
    assert.ok((await turnsDuring(() => room())) >= 1, 'the two parts are one slice');
  });

  it('begins a new slice once the event loop has turned: a short call after an idle spell does not pause', async () => {
    await pause();
    busy(SLICE_MS);
    // the loop turns (a check phase runs) and stays idle a while: what was spent before is over
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, SLICE_MS));
    assert.equal(await turnsDuring(() => room()), 0);
    assert.ok(sliceSpent() < SLICE_MS);
  });
});
