import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DurableStore } from '../../src/ports/durable-store.js';
import type { ErasureScope } from '../../src/ports/erasure.js';
import { turn, uid } from './durable-records.js';
import { entry } from './long-term.contract.js';

/**
 * The contract every ErasureStore passes (see its doc comment in src/ports/erasure.ts), over the
 * durable store it is part of: rows are written through the store's turn log, long-term store and
 * archive store, and must be gone from all of them afterwards. `open` gives a store on a database of
 * its own for this file (scope `all` erases every row in it).
 */
export function runErasureContract(name: string, open: () => Promise<DurableStore>): void {
  describe(`ErasureStore contract: ${name}`, () => {
    /** a user with two sessions: turns, their entries, a pinned entry and a summary */
    async function seed(store: DurableStore, user: string) {
      const t1 = turn(user, 'I moved to Porto in March', { session_id: 'a' });
      const t2 = turn(user, 'My sister Ana is a nurse', { session_id: 'b', pinned: true });
      await store.turnLog.append([t1, t2]);
      const e1 = entry(user, t1.content, { id: t1.id, session_id: 'a' });
      const pinned = entry(user, t2.content, { id: t2.id, session_id: 'b', pinned: true });
      const summary = entry(user, 'summary of session a', { id: `summary~${Math.random().toString(36).slice(2)}`, session_id: 'a', kind: 'summary' });
      await store.longTerm.upsert([e1, pinned, summary]);
      return { t1, t2, e1, pinned, summary };
    }

    it('erases one user whole, pinned included, reports the rows by kind, and leaves other users alone', async () => {
      const store = await open();
      const [ann, bob] = [uid(), uid()];
      const a = await seed(store, ann);
      const b = await seed(store, bob);
      assert.deepEqual([...(await store.erasure.idsIn({ kind: 'user', userId: ann }))].sort(), [a.t1.id, a.t2.id, a.summary.id].sort());

      const rows = await store.erasure.eraseRows({ kind: 'user', userId: ann });
      assert.deepEqual(rows.long_term, { turn: 2, summary: 1, archive: 0 });
      assert.equal(rows.turn_log, 2);
      assert.equal(await store.turnLog.get(ann, a.t1.id), null);
      assert.equal(await store.turnLog.get(ann, a.t2.id), null, 'a pinned turn is erased too');
      assert.equal(await store.longTerm.get(ann, a.pinned.id), null, 'a pinned entry is erased too');
      assert.equal(await store.longTerm.count(ann), 0);
      assert.deepEqual(await store.longTerm.searchSubstring(ann, 'Porto', { limit: 10 }), []);
      assert.equal((await store.erasure.idsIn({ kind: 'user', userId: ann })).size, 0);

      assert.deepEqual(await store.turnLog.get(bob, b.t1.id), b.t1, "another user's turns stay");
      assert.equal(await store.longTerm.count(bob), 3, "another user's entries stay");
      const again = await store.erasure.eraseRows({ kind: 'user', userId: ann });
      assert.deepEqual({ ...again.long_term, turn_log: again.turn_log }, { turn: 0, summary: 0, archive: 0, turn_log: 0 }, 'a second erasure finds nothing');
    });

    it('erases one session of a user and nothing of the others', async () => {
      const store = await open();
      const ann = uid();
      const a = await seed(store, ann);
      const scope: ErasureScope = { kind: 'session', userId: ann, sessionId: 'a' };
      assert.deepEqual([...(await store.erasure.idsIn(scope))].sort(), [a.t1.id, a.summary.id].sort());
      const rows = await store.erasure.eraseRows(scope);
      assert.deepEqual(rows.long_term, { turn: 1, summary: 1, archive: 0 });
      assert.equal(rows.turn_log, 1);
      assert.equal(await store.turnLog.get(ann, a.t1.id), null);
      assert.deepEqual(await store.turnLog.get(ann, a.t2.id), a.t2, 'the other session stays');
      assert.deepEqual(await store.longTerm.get(ann, a.pinned.id), a.pinned);
    });

    it('erases everything, the outbox of vector deletes included', async () => {
      const store = await open();
      const [ann, bob] = [uid(), uid()];
      await seed(store, bob);
      // an archived session queues its removed memories' vectors for deletion
      const old = turn(ann, 'an old conversation', { session_id: 'old', created_at: '2020-01-01T00:00:00.000Z' });
      await store.turnLog.append([old]);
      const [ref] = (await store.archives.candidates('2021-01-01T00:00:00.000Z', ann)).filter((r) => r.session_id === 'old');
      assert.ok(ref, 'the old session is an archival candidate');
      const archiveId = `archive~${Math.random().toString(36).slice(2)}`;
      const contents = await store.archives.contents(ref, archiveId);
      const replaced = await store.archives.replace(contents, entry(ann, 'archive of the old session', { id: archiveId, session_id: 'old', kind: 'archive' }), '2021-01-01T00:00:00.000Z');
      assert.deepEqual(replaced?.removed, [old.id]);
      assert.ok((await store.archives.vectorDeletesPending()) >= 1);

      const rows = await store.erasure.eraseRows({ kind: 'all' });
      assert.ok(rows.long_term.archive >= 1 && rows.long_term.turn >= 2 && rows.turn_log >= 2, JSON.stringify(rows));
      assert.equal(await store.longTerm.count(), 0);
      assert.equal((await store.turnLog.counts()).total, 0);
      assert.equal(await store.archives.vectorDeletesPending(), 0, 'no vector delete of an erased memory waits');
      assert.equal((await store.erasure.idsIn({ kind: 'all' })).size, 0);
    });

    it('signals erasures to the other processes in order, each scope as it was given', async () => {
      const store = await open();
      const before = await store.erasure.latestSignal();
      const ann = uid();
      const scopes: ErasureScope[] = [{ kind: 'user', userId: ann }, { kind: 'session', userId: ann, sessionId: 's 1' }, { kind: 'all' }];
      const seqs: number[] = [];
      // the second a delete's, edit's or prune's (settle): the action travels with the scope
      const actions = ['erase', 'settle', 'erase'] as const;
      for (const [i, scope] of scopes.entries()) seqs.push(await store.erasure.signal(scope, 'host-a:4242:0a1b2c3d', Date.now(), i === 0 ? undefined : actions[i]));
      assert.ok(seqs[0]! > before && seqs[1]! > seqs[0]! && seqs[2]! > seqs[1]!, `increasing: ${before} ${seqs.join(' ')}`);
      assert.equal(await store.erasure.latestSignal(), seqs[2]);
      const seen = await store.erasure.signalsAfter(before);
      assert.deepEqual(seen, scopes.map((scope, i) => ({ seq: seqs[i], scope, instance: 'host-a:4242:0a1b2c3d', action: actions[i] })));
      assert.deepEqual(await store.erasure.signalsAfter(seqs[2]!), []);
    });

    it('drops signals older than a few minutes when a new one is written', async () => {
      const store = await open();
      const old = await store.erasure.signal({ kind: 'user', userId: uid() }, 'host-a:4242:0a1b2c3d', Date.now() - 60 * 60_000);
      const fresh = await store.erasure.signal({ kind: 'user', userId: uid() }, 'host-a:4242:0a1b2c3d', Date.now());
      const seen = (await store.erasure.signalsAfter(old - 1)).map((s) => s.seq);
      assert.deepEqual(seen, [fresh], 'the hour-old signal is gone');
    });

    it('keeps one listener row per process instance, processes of two hosts with one pid apart; a stale heartbeat does not remove a fresh one', async () => {
      const store = await open();
      const pid = 900_000 + Math.floor(Math.random() * 90_000);
      const [a, b] = [`host-a:${pid}:0000aaaa`, `host-b:${pid}:0000bbbb`];
      await store.erasure.heartbeat(a, 3, 1000);
      await store.erasure.heartbeat(a, 5, 2000);
      await store.erasure.heartbeat(b, 1, 1500);
      const rows = async (except = 'none') => (await store.erasure.listeners(except)).filter((l) => l.instance === a || l.instance === b);
      assert.deepEqual(await rows(), [{ instance: a, seen_seq: 5, heartbeat_at: 2000 }, { instance: b, seen_seq: 1, heartbeat_at: 1500 }], 'one pid on two hosts: two listeners');
      assert.deepEqual(await rows(a), [{ instance: b, seen_seq: 1, heartbeat_at: 1500 }], 'the caller is left out, the other host\'s process with its pid is not');
      await store.erasure.leave(a, 1000);
      assert.equal((await rows()).length, 2, 'removed only while its heartbeat is the one seen');
      await store.erasure.leave(a, 2000);
      assert.deepEqual((await rows()).map((l) => l.instance), [b], 'leaving removes that instance only');
      await store.erasure.heartbeat(a, 6, 3000);
      await store.erasure.leave(a);
      await store.erasure.leave(b);
      assert.deepEqual(await rows(), []);
    });

    it('scrubs and vacuums without losing what was not erased', async () => {
      const store = await open();
      const ann = uid();
      const a = await seed(store, ann);
      await store.erasure.eraseRows({ kind: 'session', userId: ann, sessionId: 'a' });
      const scrubbed = await store.erasure.scrub();
      assert.equal(typeof scrubbed.complete, 'boolean');
      await store.erasure.vacuum();
      assert.deepEqual(await store.turnLog.get(ann, a.t2.id), a.t2);
      assert.equal(await store.turnLog.get(ann, a.t1.id), null, 'nothing erased comes back');
    });
  });
}
