// The long-term text list does not depend on top_k below 20 (src/retrieval/retrieve.ts, TEXT_TOP_K_MIN):
// ranked from it alone, a retrieve's first results are the same whether it asks for 8 of them or for
// 20. Read 3 × top_k deep, the overlap list of a top_k 8 retrieve ranked 24 candidates, and memories
// holding more of the query's words that only a deeper list found were missing from its first results.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Retriever } from '../../../src/retrieval/retrieve.js';
import { RetrieveRequestSchema } from '../../../src/retrieval/request.js';
import type { Memory } from '../../../src/memory/memory.js';
import type { Services } from '../../../src/roots/library.js';
import { testMemory } from '../../helpers/services.js';

const WORDS = ['harbour', 'violin', 'lantern', 'orchard', 'glacier', 'pepper', 'compass', 'meadow', 'quartz', 'saddle', 'thimble', 'walnut', 'canyon', 'ember', 'falcon', 'garnet', 'hammock', 'igloo', 'juniper', 'kettle', 'lagoon', 'marble', 'nectar', 'oyster'];

describe('the long-term text list of a retrieve', () => {
  let memory: Memory;
  let services: Services;
  // a fixed sequence (an LCG), so every run asks the same
  let seed = 7;
  const int = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const pick = (n: number) => Array.from({ length: n }, () => WORDS[int(WORDS.length)]!);

  before(async () => {
    ({ memory, services } = await testMemory({}, { reconcile: false }));
    const turns = Array.from({ length: 160 }, (_, i) => ({
      id: `t${i}`,
      user_id: 'u1',
      session_id: `s${Math.floor(i / 8)}`,
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      created_at: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
      // a few of the words, some of them repeated, in sentences of different lengths
      content: `We talked about the ${pick(1 + int(4)).join(' and the ')} again, ${'and it was fine '.repeat(int(4))}then the ${pick(1 + int(3)).join(', the ')}.`,
    }));
    await memory.addTurns(turns);
    await memory.idle();
  });
  after(() => memory.close());

  it('is as deep at top_k 8 as at top_k 20: the first 8 results are the same', async () => {
    // the semantic list left out: it is read 3 × top_k deep, and this pins the text list alone
    const textOnly = new Retriever({ ...services.retrieverDeps, signals: { semantic: false } });
    const ask = (query: string, top_k: number) => textOnly.retrieve(RetrieveRequestSchema.parse({ query, user_id: 'u1', top_k }));
    for (let q = 0; q < 12; q++) {
      const query = `What did we say about the ${pick(3).join(', the ')}?`;
      const [eight, twenty] = await Promise.all([ask(query, 8), ask(query, 20)]);
      assert.equal(eight.results.length, 8, query);
      assert.deepEqual(eight.results.map((r) => r.id), twenty.results.slice(0, 8).map((r) => r.id), query);
    }
  });
});
