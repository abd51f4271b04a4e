import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
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
