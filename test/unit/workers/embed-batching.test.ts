import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Embedder } from '../../../src/ports/embedder.js';
import { HashEmbedder } from '../../../src/embedding/hash.js';
import { testMemory } from '../../helpers/services.js';

/** the hash embedder, counting its model calls and the texts they carried */
class CountingEmbedder implements Embedder {
  readonly inner = new HashEmbedder();
  readonly id = this.inner.id;
  readonly dim = this.inner.dim;
  calls: number[] = [];
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls.push(texts.length);
    return this.inner.embed(texts);
  }
  async close(): Promise<void> {}
}

describe('embed processor batching', () => {
  it('N concurrent embed jobs share model calls: fewer calls than jobs, every turn embedded once', async () => {
    const counting = new CountingEmbedder();
    const { memory, services } = await testMemory({ worker_concurrency: 16 }, { loadEmbedder: async () => counting, reconcile: false });
    after(() => services.close());
    const n = 96;
    const turns = Array.from({ length: n }, (_, i) => ({ user_id: 'u', session_id: `s${i % 4}`, role: 'user', content: `fact number ${i}: the ${i}th colour is ${i % 7}` }));
    const { ids } = await memory.addTurns(turns);
    await memory.idle();

    const texts = counting.calls.reduce((a, b) => a + b, 0);
    assert.equal(texts, n, 'each turn embedded exactly once');
    assert.ok(counting.calls.length < n, `${counting.calls.length} model calls for ${n} jobs`);
    assert.ok(Math.max(...counting.calls) > 1, `batches of ${JSON.stringify(counting.calls)}`);
    assert.equal((await services.vectors.has(counting, 'u', ids)).size, n);
    assert.equal((await services.turnLog.counts()).pending_embed, 0);
  });
});
