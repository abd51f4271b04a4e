import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HashEmbedder } from '../../../src/embedding/hash.js';
import { worstInputs } from '../../fixtures/token-worst.js';

/** notes how many turns of the event loop had passed (a setImmediate chain ticks them) at each text embedded */
class TickedEmbedder extends HashEmbedder {
  ticks = 0;
  readonly at: number[] = [];
  override embedOne(text: string): Float32Array {
    this.at.push(this.ticks);
    return super.embedOne(text);
  }
}

async function ticking<T>(e: TickedEmbedder, fn: () => Promise<T>): Promise<T> {
  let done = false;
  const tick = () => {
    e.ticks++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return await fn();
  } finally {
    done = true;
  }
}

describe('HashEmbedder', () => {
  // issue 25: an embed batch of long turns (a /chat's message and its echoed reply, 32,000 characters
  // each) was embedded in one turn of the event loop
  it('embeds a batch of long texts one turn of the event loop each, with the vectors one by one gives', async () => {
    const texts = Object.values(worstInputs());
    const e = new TickedEmbedder();
    const vectors = await ticking(e, () => e.embed(texts));
    assert.equal(new Set(e.at).size, texts.length, `ticks at each text: ${e.at.join(',')}`);
    for (const [i, t] of texts.entries()) assert.deepEqual(vectors[i], new HashEmbedder().embedOne(t));
  });

  it('embeds a batch of short texts in one turn', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `my sister Ana moved to Porto in ${2000 + i}`);
    const e = new TickedEmbedder();
    await ticking(e, () => e.embed(texts));
    assert.equal(new Set(e.at).size, 1);
  });
});
