import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import type { Embedder } from '../../../src/ports/embedder.js';
import { keysHolding } from '../../helpers/redis-scan.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { testMemory } from '../../helpers/services.js';
import { until } from '../../helpers/until.js';

/**
 * Issue 26, defects 4 and 5, on a real redis-server (BullMQ queue and short-term tier): after a
 * delete, prune, edit (the old text) or forget no key holds the text, and a deleted id added again is
 * processed at once, not when the reconciler next looks (set an hour away here).
 */
describe('Redis: no erased text stays in a key; a re-added id is processed at once', () => {
  let redis: RedisHandle;
  let memory: Memory;

  before(async () => {
    redis = await startRedis();
    ({ memory } = await testMemory({ redis_url: redis.url, redis_prefix: 'erased', reconcile_interval_s: 3600 }, { runWorkers: true }));
  });
  after(async () => {
    await memory.close();
    await redis.stop(true);
  });

  const turn = (id: string, content: string, session = 's1') => ({ id, user_id: 'ann', session_id: session, role: 'user', name: `name-${id}`, content, importance: 0.9, metadata: { note: `meta-${id}` } });

  async function written(id: string, content: string, session?: string): Promise<void> {
    await memory.addTurns(turn(id, content, session));
    await memory.idle();
    assert.ok((await keysHolding(redis.url, content)).length > 0, 'the text is in Redis while the turn lives (short-term tier)');
  }

  it('delete', async () => {
    await written('d1', 'MARKER-delete-7781');
    await memory.delete('ann', 'd1');
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-delete-7781'), []);
    assert.deepEqual(await keysHolding(redis.url, 'meta-d1'), [], 'nor its metadata');
    assert.deepEqual(await keysHolding(redis.url, 'name-d1'), [], 'nor its name');
  });

  it('prune', async () => {
    await written('p1', 'MARKER-prune-5521', 'sp');
    await memory.prune({ userId: 'ann', sessionId: 'sp' });
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-prune-5521'), []);
  });

  it('edit: the old text', async () => {
    await written('e1', 'MARKER-edit-old-3317');
    await memory.edit('ann', 'e1', { content: 'the new text of e1' });
    await memory.idle();
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-edit-old-3317'), []);
    await memory.delete('ann', 'e1');
  });

  it('forget', async () => {
    await written('f1', 'MARKER-forget-9043', 'sf');
    await memory.forget('ann');
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-forget-9043'), []);
  });

  it('a deleted id added again is processed at once', async () => {
    await written('r1', 'the first text of r1');
    await memory.delete('ann', 'r1');
    assert.equal((await memory.addTurns(turn('r1', 'the second text of r1'))).accepted, 1);
    await until('the re-added turn to be persisted', async () => (await memory.get('ann', 'r1'))?.content === 'the second text of r1', 10_000, 50);
    await memory.delete('ann', 'r1');
    assert.equal((await memory.addTurns(turn('r1', 'a third text of r1'))).accepted, 1, 'no conflict with a job of the deleted turn');
    await until('the third text to be persisted', async () => (await memory.get('ann', 'r1'))?.content === 'a third text of r1', 10_000, 50);
  });
});

/**
 * Issue 26, defect 4, for the jobs that have not completed: an embed job still waiting (no embed
 * worker runs) or failed (the embedder refuses every text) keeps the text it was given; a delete,
 * prune or edit must remove it too.
 */
describe('Redis: no erased text stays in a job still waiting or failed', () => {
  let redis: RedisHandle;
  const opened: Memory[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const m of opened) await m.close();
    await redis.stop(true);
  });

  const turn = (id: string, content: string, session: string) => ({ id, user_id: 'ann', session_id: session, role: 'user', name: `name-${id}`, content, importance: 0.9, metadata: { note: `meta-${id}` } });

  /** a service whose embed jobs stay waiting: only the persist queue is consumed */
  async function persistOnly(prefix: string): Promise<Memory> {
    const { memory } = await testMemory({ redis_url: redis.url, redis_prefix: prefix, reconcile_interval_s: 3600 }, { runWorkers: true, workerQueues: ['persist'] });
    opened.push(memory);
    return memory;
  }

  /** the turn persisted, its embed job waiting with the text in Redis */
  async function waiting(memory: Memory, prefix: string, id: string, content: string, session: string): Promise<void> {
    await memory.addTurns(turn(id, content, session));
    await until('the turn to be persisted', async () => (await memory.get('ann', id)) !== null, 10_000, 50);
    const keys = await keysHolding(redis.url, content);
    assert.ok(keys.some((k) => k.startsWith(`${prefix}:bull:embed:`) && k.endsWith('(hash)')), `the waiting embed job holds the text: ${keys.join(', ')}`);
  }

  it('delete of a memory whose embed job is waiting', async () => {
    const memory = await persistOnly('wait-d');
    await waiting(memory, 'wait-d', 'wd1', 'MARKER-wait-delete-6120', 'sd');
    await memory.delete('ann', 'wd1');
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-wait-delete-6120'), []);
    assert.deepEqual(await keysHolding(redis.url, 'meta-wd1'), [], 'nor its metadata');
    assert.deepEqual(await keysHolding(redis.url, 'name-wd1'), [], 'nor its name');
  });

  it('prune of a memory whose embed job is waiting', async () => {
    const memory = await persistOnly('wait-p');
    await waiting(memory, 'wait-p', 'wp1', 'MARKER-wait-prune-4471', 'sp');
    await memory.prune({ userId: 'ann', sessionId: 'sp' });
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-wait-prune-4471'), []);
  });

  it('edit of a memory whose embed job is waiting: the old text', async () => {
    const memory = await persistOnly('wait-e');
    await waiting(memory, 'wait-e', 'we1', 'MARKER-wait-edit-8832', 'se');
    await memory.edit('ann', 'we1', { content: 'the new text of we1' });
    assert.deepEqual(await keysHolding(redis.url, 'MARKER-wait-edit-8832'), []);
  });

  it('delete, prune and edit of memories whose embed jobs failed', { timeout: 60_000 }, async () => {
    const refusing: Embedder = { id: 'refusing:4', dim: 4, embed: () => Promise.reject(new Error('the embedder refuses every text')), close: async () => {} };
    const { memory } = await testMemory(
      { redis_url: redis.url, redis_prefix: 'fail-d', reconcile_interval_s: 3600 },
      { runWorkers: true, loadEmbedder: async () => refusing },
    );
    opened.push(memory);
    const markers = { fd1: 'MARKER-failed-delete-2290', fp1: 'MARKER-failed-prune-7154', fe1: 'MARKER-failed-edit-3808' };
    await memory.addTurns([turn('fd1', markers.fd1, 'sf'), turn('fp1', markers.fp1, 'sfp'), turn('fe1', markers.fe1, 'sf')]);
    // five attempts, 1 + 2 + 4 + 8 s apart
    await until('the embed jobs to fail for good', async () => (await memory.failedJobs('embed', 10)).length === 3, 45_000, 200);
    for (const m of Object.values(markers)) assert.ok((await keysHolding(redis.url, m)).length > 0, `the failed job holds ${m}`);
    await memory.delete('ann', 'fd1');
    await memory.prune({ userId: 'ann', sessionId: 'sfp' });
    await memory.edit('ann', 'fe1', { content: 'the new text of fe1' });
    for (const m of Object.values(markers)) assert.deepEqual(await keysHolding(redis.url, m), [], m);
    // the edit's job of its new text is retried meanwhile, not failed for good yet
    assert.equal((await memory.failedJobs('embed', 10)).length, 0, 'none is listed as failed');
  });
});
