import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { turn } from '../helpers/turns.js';
import type { ShortTermOptions, ShortTermStore } from '../../src/ports/short-term.js';

/**
 * The contract every ShortTermStore passes (see its doc comment). `make` returns a fresh, empty store
 * with the given options; each test uses its own user ids, so stores may be shared backends.
 */
export function shortTermContract(name: string, make: (o: ShortTermOptions) => Promise<ShortTermStore>): void {
  describe(`ShortTermStore contract: ${name}`, () => {
    const u = () => `user-${Math.random().toString(36).slice(2)}`;

    it('returns a session\'s turns oldest first, scoped by user and session', async () => {
      const s = await make({ ttlSeconds: 60, maxTurns: 10 });
      const [a, b] = [u(), u()];
      const t1 = turn(a, 's', 'one');
      const t2 = turn(a, 's', 'two');
      await s.push([t1, t2, turn(b, 's', 'other user'), turn(a, 's2', 'other session')]);
      assert.deepEqual((await s.recent(a, 's')).map((t) => t.content), ['one', 'two']);
      assert.deepEqual(await s.recent(a, 's'), [t1, t2], 'turns round-trip unchanged');
      assert.deepEqual((await s.recent(b, 's')).map((t) => t.content), ['other user']);
      assert.deepEqual((await s.recent(a, 's', 1)).map((t) => t.content), ['two']);
      assert.deepEqual(await s.recent(a, 'none'), []);
      await s.close();
    });

    it('keeps at most maxTurns per session, dropping the oldest', async () => {
      const s = await make({ ttlSeconds: 60, maxTurns: 3 });
      const a = u();
      for (let i = 0; i < 5; i++) await s.push([turn(a, 's', `m${i}`)]);
      assert.deepEqual((await s.recent(a, 's')).map((t) => t.content), ['m2', 'm3', 'm4']);
      await s.close();
    });

    it('ignores a turn id pushed twice', async () => {
      const s = await make({ ttlSeconds: 60, maxTurns: 10 });
      const a = u();
      const t = turn(a, 's', 'once');
      await s.push([t]);
      await s.push([t]);
      assert.equal((await s.recent(a, 's')).length, 1);
      await s.close();
    });

    it('forgets a session untouched for its TTL', async () => {
      const s = await make({ ttlSeconds: 1, maxTurns: 10 });
      const a = u();
      await s.push([turn(a, 's', 'soon gone')]);
      assert.equal((await s.recent(a, 's')).length, 1);
      await new Promise((r) => setTimeout(r, 1300));
      assert.deepEqual(await s.recent(a, 's'), []);
      await s.close();
    });

    it('replaces, removes and clears', async () => {
      const s = await make({ ttlSeconds: 60, maxTurns: 10 });
      const a = u();
      const [t1, t2, t3] = [turn(a, 's', 'a'), turn(a, 's', 'b'), turn(a, 's2', 'c')];
      await s.push([t1, t2, t3]);
      assert.deepEqual((await s.sessions(a)).sort(), ['s', 's2']);
      assert.equal(await s.remove(a, 's', [t1.id, 'missing']), 1);
      assert.deepEqual((await s.recent(a, 's')).map((t) => t.content), ['b']);
      const summary = turn(a, 's', 'summary', { role: 'system' });
      await s.replace(a, 's', [summary]);
      assert.deepEqual((await s.recent(a, 's')).map((t) => t.content), ['summary']);
      assert.equal(await s.clear(a, 's'), 1);
      assert.deepEqual(await s.recent(a, 's'), []);
      assert.equal(await s.clear(a), 1);
      assert.deepEqual(await s.sessions(a), []);
      await s.push([turn(a, 'x', 'x')]);
      assert.ok((await s.clearAll()) >= 1);
      assert.deepEqual(await s.recent(a, 'x'), []);
      assert.equal(await s.ping(), true);
      await s.close();
    });

    it('recentSince: the turns, then nothing while the session is unchanged, and the turns again after any change', async () => {
      const s = await make({ ttlSeconds: 1, maxTurns: 10 });
      const a = u();
      const [t1, t2] = [turn(a, 's', 'one'), turn(a, 's', 'two')];
      const none = await s.recentSince(a, 's', undefined, null);
      assert.deepEqual(none?.turns, [], 'no session: no turns');
      await s.push([t1, t2]);
      const seen: Array<number | null> = [none!.version];
      /** what a reader holding the last version read gets now: the turns when they changed */
      const read = async (what: string) => {
        const now = await s.recentSince(a, 's', undefined, seen.at(-1)!);
        assert.ok(now !== null, `${what}: the session changed, so its turns are answered`);
        assert.deepEqual(now.turns, await s.recent(a, 's'), `${what}: the turns recent answers`);
        if (now.version !== null) {
          if (now.turns.length === 0) assert.equal(now.version, 0, `${what}: no session is version 0`);
          else assert.ok(!seen.includes(now.version), `${what}: a version never given before (${now.version}, seen ${seen.join(', ')})`);
          assert.equal(await s.recentSince(a, 's', undefined, now.version), null, `${what}: unchanged since`);
        }
        seen.push(now.version);
        return now.turns;
      };
      assert.deepEqual(await read('pushed'), [t1, t2]);
      await s.push([t1]);
      if (seen.at(-1) !== null) assert.equal(await s.recentSince(a, 's', undefined, seen.at(-1)!), null, 'a turn pushed twice changes nothing');
      await s.push([turn(a, 's2', 'another session')]);
      if (seen.at(-1) !== null) assert.equal(await s.recentSince(a, 's', undefined, seen.at(-1)!), null, 'another session changing changes nothing');
      assert.deepEqual((await s.recentSince(a, 's', 1, null))?.turns.map((t) => t.content), ['two'], 'the newest `limit` turns');
      await s.remove(a, 's', [t1.id]);
      assert.deepEqual((await read('removed')).map((t) => t.content), ['two']);
      await s.replace(a, 's', [turn(a, 's', 'summary', { role: 'system' })]);
      assert.deepEqual((await read('replaced')).map((t) => t.content), ['summary']);
      await s.clear(a, 's');
      assert.deepEqual(await read('cleared'), []);
      await s.push([turn(a, 's', 'back')]);
      assert.deepEqual((await read('written again')).map((t) => t.content), ['back']);
      await new Promise((r) => setTimeout(r, 1300));
      assert.deepEqual(await read('its TTL ran out'), []);
      await s.close();
    });
  });
}
