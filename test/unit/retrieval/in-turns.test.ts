import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { arriving } from '../../../src/pace.js';
import { inTurns, Turns } from '../../../src/retrieval/in-turns.js';
import { loopbackPair } from '../../helpers/loopback.js';

describe('inTurns', () => {
  // a clock of the test's own, moved by the work alone: on a loaded machine the real one also moves
  // while the process waits for a core, and a turn came after the first item
  let clock = 0;
  const now = () => clock;
  const sockets = loopbackPair();

  // called where the event loop reads connections, as a request's handler is: a setImmediate set
  // there ran at the end of that same turn, before the next read, and a probe's /health waited
  it('gives a turn in which the event loop reads what arrived once the pass has run its slice, and runs every item in order', async () => {
    const seen: string[] = [];
    const ran = sockets.start.read().then(() => inTurns([1, 2, 3, 4], (i) => {
      seen.push(`item ${i}`);
      if (i === 2) sockets.probe.send();
      clock += 3;
    }, new Turns(5, now)));
    void sockets.probe.read().then(() => seen.push('read'));
    sockets.start.send();
    await ran;
    // 6 ms after the second item: the turn comes before the third
    assert.deepEqual(seen, ['item 1', 'item 2', 'read', 'item 3', 'item 4']);
  });

  // a pass's steps before inTurns are in its slice: they spent it, and the first item waits
  it('counts the slice from where the pass began or last turned, not from the call', async () => {
    const seen: string[] = [];
    const ran = sockets.start.read().then(async () => {
      const turns = new Turns(5, now);
      sockets.probe.send();
      clock += 6;
      await inTurns([1], (i) => seen.push(`item ${i}`), turns);
      clock += 4;
      await turns.ifDue();
      seen.push('under its slice since the turn');
    });
    void sockets.probe.read().then(() => seen.push('read'));
    sockets.start.send();
    await ran;
    assert.deepEqual(seen, ['read', 'item 1', 'under its slice since the turn']);
  });

  // a new connection is read a turn after it was accepted: a pass that went on until its slice was
  // spent made it wait for that too (a probe's /health during a fresh serve's first retrieve)
  it('turns at its next step for a connection that has just arrived, its slice young', async () => {
    const seen: string[] = [];
    const ran = sockets.start.read().then(async () => {
      const turns = new Turns(5, now);
      const read = arriving();
      try {
        await inTurns([1, 2], (i) => {
          seen.push(`item ${i}`);
          if (i === 1) {
            sockets.probe.send();
            void sockets.probe.read().then(() => {
              seen.push('read');
              read();
            });
          }
        }, turns);
      } finally {
        read();
      }
    });
    sockets.start.send();
    await ran;
    assert.deepEqual(seen, ['item 1', 'read', 'item 2']);
  });

  it('runs quick work in the turn it was called in', async () => {
    const seen: string[] = [];
    setImmediate(() => seen.push('turn'));
    await inTurns([1, 2, 3], (i) => seen.push(`item ${i}`), new Turns(1, now));
    seen.push('done');
    assert.deepEqual(seen, ['item 1', 'item 2', 'item 3', 'done']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.at(-1), 'turn');
  });
});
