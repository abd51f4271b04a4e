import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Services } from '../../../src/app.js';
import { checkIntegrity } from '../../../src/memory/integrity.js';
import type { Memory } from '../../../src/memory/memory.js';
import type { ShortTermStore } from '../../../src/ports/short-term.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { testMemory } from '../../helpers/services.js';
import { until } from '../../helpers/until.js';

/**
 * Issue 26, defect 1: a turn's short-term write lands after the turn log commit, so a delete, prune
 * or edit of that turn can run in between; the write must not bring back what they removed. The
 * race is made certain here: the store's push is held until the deleter has finished.
 */

/** the backend store under whatever this process's writers go through */
function backendStore(services: Services): ShortTermStore {
  return (services.shortTerm as ShortTermStore & { inner?: ShortTermStore }).inner ?? services.shortTerm;
}

/** Holds every `method` call of the backend store until `release()`; `held()` resolves once one is waiting. */
function hold(store: ShortTermStore, method: 'push' | 'replace'): { held: () => Promise<void>; release: () => void } {
  const original = store[method].bind(store) as (...args: unknown[]) => Promise<void>;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let waiting = false;
  (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    waiting = true;
    await gate;
    await original(...args);
  };
  return {
    held: () => until(`a short-term ${method} to be held`, () => waiting, 5_000, 5),
    release: () => {
      (store as unknown as Record<string, unknown>)[method] = original;
      open();
    },
  };
}

for (const shape of ['in-process', 'redis'] as const) {
  describe(`short-term tier: a write racing its delete, prune or edit brings nothing back (${shape})`, () => {
    let redis: RedisHandle | null = null;
    let memory: Memory;
    let services: Services;

    before(async () => {
      if (shape === 'redis') redis = await startRedis();
      ({ memory, services } = await testMemory(redis ? { redis_url: redis.url, redis_prefix: 'race' } : {}, { runWorkers: true }));
    });
    after(async () => {
      await memory.close();
      await redis?.stop(true);
    });

    const turn = (id: string, content: string) => ({ id, user_id: 'ann', session_id: 's1', role: 'user' as const, content, importance: 0.9 });
    const shortTermIds = async () => (await services.shortTerm.recent('ann', 's1')).map((t) => t.id);

    /** adds `id`, runs `erase` once the turn is logged but before its short-term write lands, then lets the write land */
    async function race(id: string, content: string, erase: () => Promise<unknown>): Promise<void> {
      const gate = hold(backendStore(services), 'push');
      const adding = memory.addTurns(turn(id, content));
      await gate.held();
      await erase();
      gate.release();
      assert.equal((await adding).accepted, 1);
    }

    it('delete', async () => {
      await race('del-1', 'the gate code is 4411', () => memory.delete('ann', 'del-1'));
      assert.deepEqual(await shortTermIds(), [], 'the deleted turn is not back in the short-term tier');
      const r = await memory.retrieve({ user_id: 'ann', session_id: 's1', query: 'gate code' });
      assert.deepEqual(r.results.filter((x) => x.id === 'del-1').map((x) => x.tier), []);
      await memory.idle();
    });

    it('prune', async () => {
      await race('prune-1', 'the locker number is 88', () => memory.prune({ userId: 'ann', sessionId: 's1' }));
      assert.deepEqual(await shortTermIds(), []);
      await memory.idle();
    });

    it('edit: the session it rewrites does not bring back a turn deleted meanwhile', async () => {
      await memory.addTurns([turn('edit-1', 'my PIN is 9090'), turn('edit-2', 'my locker is 12')]);
      await memory.idle();
      const gate = hold(backendStore(services), 'replace');
      const editing = memory.edit('ann', 'edit-1', { content: 'my PIN is secret' });
      await gate.held();
      await memory.delete('ann', 'edit-2');
      gate.release();
      await editing;
      assert.deepEqual(await shortTermIds(), ['edit-1']);
      assert.equal((await services.shortTerm.recent('ann', 's1'))[0]!.content, 'my PIN is secret');
      await memory.idle();
      await memory.delete('ann', 'edit-1');
    });

    it('doctor reads every short-term session, also of users with no stored row', async () => {
      // a copy the writers' check would take back, written under them: what older builds left
      await backendStore(services).push([{ ...turn('ghost-1', 'a ghost turn'), user_id: 'nobody', content_hash: 'x', created_at: new Date().toISOString(), name: null, pinned: false, metadata: null }]);
      const report = await checkIntegrity(services);
      assert.deepEqual(report.orphan_short_term.sample, [{ user_id: 'nobody', id: 'ghost-1' }]);
      const repaired = await checkIntegrity(services, { repair: true });
      assert.equal(repaired.orphan_short_term.count, 0);
    });
  });
}
