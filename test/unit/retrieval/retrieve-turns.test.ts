// A retrieval pass runs its tiers' reads in one piece each (an embedded store's are synchronous): the
// event loop turns between its steps once the pass has run its slice, so that a probe's /health arriving
// meanwhile is read before the pass goes on. A fresh process's first retrieve on real text held the
// loop 20–35 ms at a time, and /health waited behind two or three such stretches (44–68 ms).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Services } from '../../../src/app.js';
import type { Memory } from '../../../src/memory/memory.js';
import type { VectorIndex } from '../../../src/ports/vector-index.js';
import { TURN_MS } from '../../../src/retrieval/in-turns.js';
import { Retriever } from '../../../src/retrieval/retrieve.js';
import { loopbackPair } from '../../helpers/loopback.js';
import { testMemory } from '../../helpers/services.js';

const busy = (ms: number) => {
  for (const until = performance.now() + ms; performance.now() < until; );
};

describe('a retrieval pass gives the event loop turns between its steps', () => {
  let memory: Memory;
  let services: Services;
  const sockets = loopbackPair();
  before(async () => {
    ({ memory, services } = await testMemory({}, { reconcile: false }));
    await memory.addTurns([
      { user_id: 'bee', session_id: 'hive', role: 'user', content: 'The bees made honey this summer, lots of it.' },
      { user_id: 'bee', session_id: 'hive', role: 'assistant', content: 'Keep the hive out of the afternoon sun for the honey to set.' },
    ]);
    await memory.idle();
    await services.embedders.ready();
  });
  after(() => memory.close());

  // the vector search waits inside (its index's lane) before it holds the loop: the process's slice,
  // begun at the first look after a turn, missed this work; the pass's own clock counts it
  it('reads a connection that arrived while its vector search held the loop before it answers', async () => {
    const base = services.retrieverDeps;
    let searched = 0;
    const vectors = Object.assign(Object.create(base.vectors) as VectorIndex, {
      async search(...args: Parameters<VectorIndex['search']>) {
        const hits = await base.vectors.search(...args);
        searched++;
        sockets.probe.send();
        busy(TURN_MS + 2);
        return hits;
      },
    });
    const retriever = new Retriever({ ...base, vectors });
    const seen: string[] = [];
    // from where the event loop reads connections, as a request's handler runs
    const done = sockets.start.read().then(async () => {
      const r = await retriever.retrieve({ query: 'how much honey did the bees make?', user_id: 'bee', top_k: 3 });
      seen.push(`answered ${r.results.length}`);
    });
    void sockets.probe.read().then(() => seen.push('read'));
    sockets.start.send();
    await done;
    assert.equal(searched, 1, 'the vector search ran');
    assert.deepEqual(seen, ['read', 'answered 2']);
  });
});
