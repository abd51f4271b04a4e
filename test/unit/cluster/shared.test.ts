import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessShortTermStore } from '../../../src/adapters/in-process/short-term.js';
import type { PrimaryCalls } from '../../../src/cluster/ipc.js';
import { sharedShortTerm } from '../../../src/cluster/shared.js';
import type { VersionedTurns } from '../../../src/ports/short-term.js';
import { turn } from '../../helpers/turns.js';

/** The primary's short-term tier as a worker process reaches it, each reply structured-cloned (as the channel does), the turns crossing counted. */
function primary(ttlSeconds = 60, clock?: () => number) {
  const store = new InProcessShortTermStore({ ttlSeconds, maxTurns: 50 });
  const crossed = { calls: 0, turns: 0 };
  const calls = {
    async call<T>(target: string, method: string, args: unknown[]): Promise<T> {
      assert.equal(target, 'short_term');
      crossed.calls++;
      const value = await (store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!.apply(store, args);
      if (method === 'recentSince' && value !== null) crossed.turns += (value as VersionedTurns).turns.length;
      return structuredClone(value) as T;
    },
  } as unknown as PrimaryCalls;
  return { store, crossed, worker: sharedShortTerm(calls, clock) };
}

describe('the primary\'s short-term tier in a worker process', () => {
  it('sends a session\'s turns once while it is unchanged, and every change at the next read', async () => {
    const { store, crossed, worker } = primary();
    const [t1, t2, t3] = [turn('u', 's', 'one'), turn('u', 's', 'two'), turn('u', 's', 'three')];
    await store.push([t1, t2]);
    assert.deepEqual(await worker.recent('u', 's'), [t1, t2]);
    assert.equal(crossed.turns, 2);
    for (let i = 0; i < 3; i++) assert.deepEqual(await worker.recent('u', 's'), [t1, t2], 'the copy, confirmed by the primary');
    assert.equal(crossed.turns, 2, 'no turn crossed again');
    assert.equal(crossed.calls, 4, 'every read asked the primary');

    // written through another process (the primary's own write path)
    await store.push([t3]);
    assert.deepEqual(await worker.recent('u', 's'), [t1, t2, t3]);
    await store.remove('u', 's', [t1.id]);
    assert.deepEqual(await worker.recent('u', 's'), [t2, t3], 'a turn deleted elsewhere is not served from the copy');
    await store.clear('u');
    assert.deepEqual(await worker.recent('u', 's'), [], 'nor a cleared session');
    assert.deepEqual(await worker.recent('u', 's', 1), [], 'a read with a limit is a copy of its own');
  });

  it('serves no copy of a session whose TTL ran out', async () => {
    const { store, worker } = primary(1);
    await store.push([turn('u', 's', 'soon gone')]);
    assert.equal((await worker.recent('u', 's')).length, 1);
    await new Promise((r) => setTimeout(r, 1300));
    assert.deepEqual(await worker.recent('u', 's'), []);
  });

  it('hands each caller an array of its own', async () => {
    const { store, worker } = primary();
    await store.push([turn('u', 's', 'one')]);
    (await worker.recent('u', 's')).pop();
    assert.equal((await worker.recent('u', 's')).length, 1);
  });

  it('drops a copy not read for a minute: the text of a session nobody reads is not kept', async () => {
    let now = 1_000_000;
    const { store, crossed, worker } = primary(3600, () => now);
    await store.push([turn('u', 'a', 'one'), turn('u', 'b', 'two')]);
    await worker.recent('u', 'a');
    await worker.recent('u', 'b');
    now += 45_000;
    await worker.recent('u', 'b');
    assert.equal(crossed.turns, 2, 'both copies kept, b read again from its copy');
    now += 20_000;
    await worker.recent('u', 'b');
    assert.equal(crossed.turns, 2, 'b was read 20 s ago: still kept');
    await worker.recent('u', 'a');
    assert.equal(crossed.turns, 3, 'a was last read 65 s ago: dropped, and read whole again');
  });

  it('keeps copies up to a bound of text, the session read longest ago dropped first', async () => {
    const { store, crossed, worker } = primary();
    // 3 sessions of 1.5 M characters: past the 4 M kept
    const big = (s: string) => Array.from({ length: 50 }, (_, i) => turn('u', s, `${s}${i} `.padEnd(30_000, 'x')));
    for (const s of ['a', 'b', 'c']) await store.push(big(s));
    for (const s of ['a', 'b', 'c']) await worker.recent('u', s);
    assert.equal(crossed.turns, 150);
    await worker.recent('u', 'c');
    await worker.recent('u', 'b');
    assert.equal(crossed.turns, 150, 'the two read last are kept');
    await worker.recent('u', 'a');
    assert.equal(crossed.turns, 200, 'the first was dropped to keep the third, and crossed again');
  });
});
