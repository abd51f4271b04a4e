import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answering, arriving, giveTurn, pause, room, SLICE_MS, sliceSpent, turn, UNREAD_HOLD_MS } from '../../src/pace.js';
import { loopbackPair } from '../helpers/loopback.js';
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

/** `fn` while a request is being answered (as the HTTP edge marks one) */
async function whileAnswering<T>(fn: () => Promise<T>): Promise<T> {
  const done = answering();
  try {
    return await fn();
  } finally {
    done();
  }
}

/**
 * `check` again when an assertion of it fails, up to 20 times: a process descheduled through a whole
 * pause (5 ms) wakes in the timers phase that ends it, so no turn of the loop is counted in it, and
 * the count measures the scheduler, not the pace. A pace that never pauses, or always does, fails
 * every try.
 */
async function retried(check: () => Promise<void>): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      return await check();
    } catch (err) {
      if (tries === 20 || !(err instanceof assert.AssertionError)) throw err;
    }
  }
}

/** a pause gives the loop many turns (it idles through them); a turn (turn(): one or two setImmediates) is no pause */
const PAUSE_TURNS = 3;

/**
 * The process's slices of work: `room()` gives the event loop nothing while the slice is young, and
 * once it has run its length, whoever spent it, pauses while a request is being answered (the slice
 * then half of SLICE_MS); a pause starts a new slice. With no request in sight a spent slice (SLICE_MS)
 * gives one turn of the loop, not a pause.
 */
describe('pace: the slices long jobs share', () => {
  it('gives no turn inside a slice, a pause once it is spent, and starts a new one after', () => whileAnswering(() => retried(async () => {
    await sliceAfter(0);
    assert.ok(sliceSpent() < SLICE_MS, 'a pause starts a slice');
    assert.equal(await turnsDuring(() => room()), 0, 'a young slice goes on');
    busy(SLICE_MS);
    const started = performance.now();
    const turns = await turnsDuring(() => room());
    assert.ok(turns >= 1, 'a spent slice pauses');
    assert.ok(performance.now() - started >= SLICE_MS / 2 - 1, 'for as long as a slice (half of SLICE_MS while requests are answered)');
    assert.ok(sliceSpent() < SLICE_MS);
  })));

  it('is one slice for every job of the process: what one spent, the next does not spend again', () => whileAnswering(() => retried(async () => {
    await sliceAfter(SLICE_MS / 5);
    // another job's room() after part of a slice of the first's work: no pause yet
    assert.equal(await turnsDuring(() => room()), 0);
    busy(SLICE_MS - SLICE_MS / 5);
    assert.ok((await turnsDuring(() => room())) >= 1, 'the two parts are one slice');
  })));

  // a request's answer spans several turns, each of which may wait behind a slice
  it('halves the slice while a request is being answered', () => retried(async () => {
    answering()();
    await new Promise((r) => setTimeout(r, 2 * SLICE_MS));
    await sliceAfter(SLICE_MS / 2 + 1);
    assert.equal(await turnsDuring(() => room()), 0, 'no request: the slice goes on');
    await whileAnswering(async () => {
      await sliceAfter(SLICE_MS / 2 + 1);
      assert.ok((await turnsDuring(() => room())) >= PAUSE_TURNS, 'a request: over');
    });
  }));

  // told by a setImmediate, the turn's end: a batch's commit queued behind a summary's slice took a
  // second slice in the same turn
  it("counts work queued later in the same turn of the event loop as the slice's", () => whileAnswering(async () => {
    await sliceAfter(0);
    const spent = new Promise<number>((r) => setImmediate(() => r(sliceSpent())));
    busy(SLICE_MS);
    assert.ok((await spent) >= SLICE_MS);
  }));

  // each job's own pause let the others' slices fill it: the loop was never free for a request
  it("is one pause for every job: no job's slice begins inside another's pause", () => whileAnswering(() => retried(async () => {
    await sliceAfter(SLICE_MS);
    const first = pause();
    // a turn later, with a slice of its own to begin, another job looks
    await new Promise((r) => setTimeout(r, 2));
    assert.ok((await turnsDuring(() => room())) >= PAUSE_TURNS, 'it waits for the pause to end');
    await first;
  })));

  // a pause no request needed was time the batch writes of a bulk ingest stood idle
  it('gives one turn of the event loop, not a pause, for a spent slice while no request is being answered', async () => {
    // the last request answered more than a slice ago
    answering()();
    await new Promise((r) => setTimeout(r, 2 * SLICE_MS));
    await sliceAfter(SLICE_MS);
    assert.ok(sliceSpent() >= SLICE_MS);
    assert.ok((await turnsDuring(() => room())) < PAUSE_TURNS, 'one turn');
    assert.ok(sliceSpent() < SLICE_MS, 'and a new slice');
  });

  /**
   * The turns room() takes once a slice is spent, right after `seen` (a request answered, a connection
   * arrived). Either is recent for a slice only: a process descheduled between it and room() tries again.
   */
  const turnsRightAfter = async (seen: () => void) => {
    let turns = 0;
    for (let tries = 0; turns < PAUSE_TURNS && tries < 20; tries++) {
      await sliceAfter(SLICE_MS);
      seen();
      turns = await turnsDuring(() => room());
    }
    return turns;
  };

  it('pauses for a request answered a moment ago, whose client may come back', async () => {
    assert.ok((await turnsRightAfter(() => answering()())) >= PAUSE_TURNS);
  });

  it('pauses for a connection that has just arrived', async () => {
    assert.ok((await turnsRightAfter(() => arriving()())) >= PAUSE_TURNS);
  });

  // its request is read at the loop's next reads, a turn after it was accepted: a slice in between
  // made it wait for two (a probe's /health 35–48 ms behind the jobs of a write of long turns)
  it('begins no slice and lets no young one go on while a connection that has just arrived is not read', () => retried(async () => {
    await sliceAfter(0);
    const read = arriving();
    try {
      let returned = false;
      const resumed = room().then(() => {
        returned = true;
      });
      await new Promise((r) => setTimeout(r, SLICE_MS));
      assert.equal(returned, false, 'the job waits for the read');
      read();
      await resumed;
    } finally {
      read();
    }
  }));

  // a client's spare connection may send nothing for long
  it('holds the jobs back no longer than UNREAD_HOLD_MS for a connection that sends nothing', async () => {
    await sliceAfter(0);
    const read = arriving();
    const started = performance.now();
    await room();
    const held = performance.now() - started;
    read();
    assert.ok(held >= UNREAD_HOLD_MS - 1, `held ${held.toFixed(1)} ms`);
  });

  it('gives a turn at least: one inside a young slice, a pause once it is spent and a request waits', () => whileAnswering(() => retried(async () => {
    await sliceAfter(0);
    const turns = await turnsDuring(() => giveTurn());
    assert.ok(turns >= 1 && turns < PAUSE_TURNS, `a turn, not a pause: ${turns}`);
    busy(SLICE_MS);
    assert.ok((await turnsDuring(() => giveTurn())) >= PAUSE_TURNS);
  })));

  it('begins a new slice once the event loop has turned: a short call after an idle spell does not pause', () => whileAnswering(() => retried(async () => {
    await pause();
    busy(SLICE_MS);
    // the loop turns (a check phase runs) and stays idle a while: what was spent before is over
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, SLICE_MS));
    assert.equal(await turnsDuring(() => room()), 0);
    assert.ok(sliceSpent() < SLICE_MS);
  })));
});

// a request's turn between its steps (src/retrieval/in-turns.ts), and a job's inside a young slice:
// the event loop reads what arrived in it, also when called from where it reads connections (a
// setImmediate set there runs before the next read)
describe('pace: a turn of the event loop', () => {
  const sockets = loopbackPair();

  /** `step` called where the loop reads connections, a byte for `probe` sent just before: what came first */
  async function readOrReturned(step: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const done = sockets.start.read().then(async () => {
      sockets.probe.send();
      await step();
      seen.push('returned');
    });
    void sockets.probe.read().then(() => seen.push('read'));
    sockets.start.send();
    await done;
    return seen;
  }

  it('gives a turn in which the event loop reads what arrived, also when called where it reads', async () => {
    assert.deepEqual(await readOrReturned(turn), ['read', 'returned']);
  });

  // a vector load's page, an embedder's share of a batch
  it("gives such a turn for a job's turn inside a young slice", async () => {
    assert.deepEqual(await readOrReturned(() => giveTurn()), ['read', 'returned']);
  });

  // the next turn's timers run before its reads: a long text's preparation after the reads and an
  // embedding in the next turn's timers were two slices back to back, between two reads
  it('counts work in the next turn before its reads as the slice begun after the reads of this one', () => whileAnswering(async () => {
    const seen: string[] = [];
    void sockets.probe.read().then(() => seen.push('read'));
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        sockets.probe.send();
        sliceSpent();
        // due with the slice's own timer, in the next turn's timers
        setTimeout(() => {
          void room().then(() => {
            seen.push('returned');
            resolve();
          });
        });
        busy(SLICE_MS);
      }),
    );
    assert.deepEqual(seen, ['read', 'returned']);
  }));
});
