import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { RANKS_PER_TURN } from '../../../src/compaction/cl100k.js';

/** what a fresh process (a worker thread: modules of its own, the rank table not built) saw */
interface Seen {
  builtBefore: number;
  built: number;
  mostInOneTurn: number;
  turns: number;
  soon: number;
  sync: number;
}

/**
 * In a thread of its own, counts `text` with countSoon while a setImmediate chain notes, at each turn
 * of the event loop, how many entries of the rank table were built since the turn before.
 */
function firstCountInFreshThread(text: string): Promise<Seen> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      // the TypeScript sources need tsx's hooks, which a thread does not inherit
      if (workerData.ts) (await import('tsx/esm/api')).register();
      const cl = await import(workerData.cl100k);
      const { TokenCounter } = await import(workerData.tokens);
      const builtBefore = cl.ranksBuilt();
      let mark = builtBefore, mostInOneTurn = 0, turns = 0, done = false;
      const tick = () => {
        mostInOneTurn = Math.max(mostInOneTurn, cl.ranksBuilt() - mark);
        mark = cl.ranksBuilt();
        turns++;
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      const soon = await new TokenCounter().countSoon(workerData.text);
      done = true;
      await new Promise((resolve) => setImmediate(resolve));
      parentPort.postMessage({ builtBefore, built: cl.ranksBuilt(), mostInOneTurn, turns, soon, sync: new TokenCounter().count(workerData.text) });
    })();`;
  // the modules as this test runs them: the TypeScript sources (under tsx) or the build
  const ts = import.meta.url.endsWith('.ts');
  const source = (name: string) => new URL(`../../../src/compaction/${name}${ts ? '.ts' : '.js'}`, import.meta.url).href;
  const workerData = { text, ts, cl100k: source('cl100k'), tokens: source('tokens') };
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData });
    worker.once('message', (seen: Seen) => void worker.terminate().then(() => resolve(seen)));
    worker.once('error', reject);
  });
}

/**
 * The rank table (~100,000 entries, 100–300 ms to build) is built on a process's first count unless
 * the process built it before answering (serve and worker do). A program using the library counted
 * first in the check after a reply: built whole there, it held every other request of the process.
 */
describe('the rank table, built by a first countSoon', () => {
  it('is built RANKS_PER_TURN entries a turn of the event loop, and counts as the reference does', async () => {
    const text = 'What did you recommend for the garden budget? Ünïcödé, 漢字 and 😀 too.';
    const seen = await firstCountInFreshThread(text);
    assert.equal(seen.builtBefore, 0, 'not built before the first count');
    assert.ok(seen.built > 100_000, `the whole table: ${seen.built}`);
    assert.ok(seen.mostInOneTurn <= RANKS_PER_TURN, `at most ${RANKS_PER_TURN} entries a turn: ${seen.mostInOneTurn}`);
    assert.ok(seen.turns >= Math.floor(seen.built / RANKS_PER_TURN), `spread over turns: ${seen.turns}`);
    const reference = new Tiktoken(cl100k).encode(text, [], []).length;
    assert.equal(seen.soon, reference);
    assert.equal(seen.sync, reference);
  });
});
