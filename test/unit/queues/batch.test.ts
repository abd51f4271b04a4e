import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coalesced } from '../../../queues/batch.js';
import type { PersistJob } from '../../../queues/payloads.js';
import type { BatchJob } from '../../../queues/queue.js';

const tick = () => new Promise((r) => setImmediate(r));

/** the batches a coalesced processor sends, by the job ids in each, for jobs started one a tick */
async function batchesOf(spacingMs: number, jobs: number): Promise<string[][]> {
  const batches: string[][] = [];
  const process = coalesced<'persist'>(
    {
      maxBatch: 512,
      batch: async (js: ReadonlyArray<BatchJob<'persist'>>) => {
        batches.push(js.map((j) => j.jobId));
        return js.map(() => ({ ok: true as const }));
      },
    },
    spacingMs,
  );
  const started: Array<Promise<unknown>> = [];
  for (let i = 0; i < jobs; i++) {
    const data: PersistJob = { user_id: 'u', turn_id: `t${i}` };
    started.push(process(data, { jobId: `j${i}`, attempt: 1 }));
    await tick();
  }
  await Promise.all(started);
  return batches;
}

describe('coalesced batched processors', () => {
  it('sends the jobs of each turn of the event loop as a batch when no spacing is asked', async () => {
    assert.deepEqual(await batchesOf(0, 4), [['j0'], ['j1'], ['j2'], ['j3']]);
  });

  it('sends a lone job at once and gathers the jobs started within the spacing into the next batch', async () => {
    const t0 = performance.now();
    const batches = await batchesOf(200, 6);
    assert.deepEqual(batches, [['j0'], ['j1', 'j2', 'j3', 'j4', 'j5']]);
    assert.ok(performance.now() - t0 >= 190, 'the second batch waited out the spacing');
  });
});
