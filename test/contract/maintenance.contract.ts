import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentHash } from '../../src/domain/hash.js';
import type { DurableStore } from '../../src/ports/durable-store.js';
import type { VectorIndex } from '../../src/ports/vector-index.js';
import { turn, uid } from './durable-records.js';
import { entry } from './long-term.contract.js';

/** What a maintenance contract run needs: the store, and the vector index whose vectors it holds (null: none). */
export interface MaintenanceSubject {
  store: DurableStore;
  /** a vector index keeping its vectors in this store (the embedded index), for the vector checks */
  vectors: VectorIndex | null;
}

const TAG = { id: 'contract-embedder', dim: 2 };

/**
 * The contract every MaintenanceStore passes (see its doc comment in src/ports/maintenance.ts). `open`
 * gives a store on a database of its own (the integrity checks read every user's rows).
 */
export function runMaintenanceContract(name: string, open: () => Promise<MaintenanceSubject>): void {
  describe(`MaintenanceStore contract: ${name}`, () => {
    it('answers a ping and describes itself: schema up to date, writable, rows counted', async () => {
      const { store } = await open();
      await store.maintenance.ping();
      const ann = uid();
      const t = turn(ann, 'hello there');
      await store.turnLog.append([t]);
      await store.longTerm.upsert([entry(ann, 'a summary', { kind: 'summary' }), entry(ann, t.content, { id: t.id })]);
      const r = await store.maintenance.describe();
      assert.equal(r.kind, store.kind);
      assert.equal(r.schema_version, r.latest_version);
      assert.equal(r.writable, true, r.problem);
      assert.equal(r.rows.turns, 1);
      assert.deepEqual(r.rows.entries, { summary: 1, turn: 1 });
      assert.ok(r.path.length > 0);
    });

    it('lists users with their counts, most recently active first; a scoped listing names only its users', async () => {
      const { store } = await open();
      const [ann, bob, cyd] = [uid(), uid(), uid()];
      await store.turnLog.append([turn(ann, 'one', { session_id: 'x' }), turn(ann, 'two', { session_id: 'y' })]);
      await store.longTerm.upsert([entry(ann, 'ann entry', { session_id: 'z' })]);
      await store.turnLog.append([turn(bob, 'newest of all', { created_at: '2030-01-01T00:00:00.000Z' })]);
      await store.longTerm.upsert([entry(cyd, 'only an entry', { created_at: '2019-01-01T00:00:00.000Z', updated_at: '2019-01-01T00:00:00.000Z' })]);

      const all = await store.maintenance.users({ all: true }, 10);
      assert.deepEqual(all.map((u) => u.user_id), [bob, ann, cyd]);
      const a = all.find((u) => u.user_id === ann)!;
      assert.deepEqual({ sessions: a.sessions, turns: a.turns, entries: a.entries }, { sessions: 3, turns: 2, entries: 1 });
      assert.equal(all[0]!.last_at, '2030-01-01T00:00:00.000Z');
      assert.deepEqual((await store.maintenance.users({ all: true }, 1)).map((u) => u.user_id), [bob]);
      const scoped = await store.maintenance.users({ all: false, users: [cyd, ann, 'nobody-here'] }, 10);
      assert.deepEqual(scoped.map((u) => u.user_id), [ann, cyd], 'only the named users that hold something');
    });

    it("lists a user's sessions and a session's turns with the jobs still to run", async () => {
      const { store } = await open();
      const ann = uid();
      const [t1, t2, t3] = [turn(ann, 'first', { session_id: 'a' }), turn(ann, 'second', { session_id: 'a' }), turn(ann, 'elsewhere', { session_id: 'b' })];
      await store.turnLog.append([t1, t2, t3]);
      await store.longTerm.upsert([entry(ann, 'a summary of a', { session_id: 'a', kind: 'summary', created_at: '2031-01-01T00:00:00.000Z', updated_at: '2031-01-01T00:00:00.000Z' })]);
      const sessions = await store.maintenance.sessions(ann, 10);
      assert.deepEqual(sessions, [
        { session_id: 'a', turns: 2, entries: 1, first_at: t1.created_at, last_at: '2031-01-01T00:00:00.000Z' },
        { session_id: 'b', turns: 1, entries: 0, first_at: t3.created_at, last_at: t3.created_at },
      ]);
      assert.equal((await store.maintenance.sessions(ann, 1)).length, 1);

      await store.turnLog.markEmbedded(ann, [t1.id], TAG.id);
      await store.turnLog.markPersisted(ann, t2.id, 0.4);
      const turns = await store.maintenance.sessionTurns(ann, 'a', 10);
      assert.deepEqual(turns.map((t) => t.turn.id), [t2.id, t1.id], 'newest first');
      assert.deepEqual(turns[1], { turn: t1, pending: { embed: false, persist: true } });
      assert.deepEqual(turns[0]!.pending, { embed: true, persist: false });
      assert.equal(turns[0]!.turn.importance, 0.4);
      assert.deepEqual((await store.maintenance.sessionTurns(ann, 'a', 1)).map((t) => t.turn.id), [t2.id]);
      assert.deepEqual(await store.maintenance.sessionTurns(uid(), 'a', 10), [], "another user's session is another session");
    });

    it('finds orphan and stale entries, realigns a stale one and marks it for re-embedding', async () => {
      const { store } = await open();
      const ann = uid();
      const t = turn(ann, 'the text now');
      const gone = entry(ann, 'a turn deleted since');
      await store.turnLog.append([t]);
      await store.turnLog.markEmbedded(ann, [t.id], TAG.id);
      await store.longTerm.upsert([entry(ann, 'the text before', { id: t.id }), gone, entry(ann, 'a summary has no turn', { kind: 'summary' })]);

      assert.deepEqual(await store.maintenance.orphanEntries(), [{ user_id: ann, id: gone.id, session_id: 's1' }]);
      assert.deepEqual(await store.maintenance.staleEntries(), [{ user_id: ann, id: t.id, session_id: 's1' }]);
      await store.maintenance.realign(ann, t.id);
      const realigned = await store.longTerm.get(ann, t.id);
      assert.equal(realigned?.content, 'the text now');
      assert.equal(realigned?.content_hash, contentHash('the text now'));
      assert.deepEqual(await store.maintenance.staleEntries(), []);
      assert.equal((await store.maintenance.sessionTurns(ann, 's1', 1))[0]!.pending.embed, true, 'to be embedded again');
    });

    it('lists unfinished turns by acceptance time, duplicates, live memories and every user', async () => {
      const { store } = await open();
      const [ann, bob] = [uid(), uid()];
      const [done, waiting] = [turn(ann, 'done'), turn(ann, 'waiting')];
      await store.turnLog.append([done, waiting], 1000);
      await store.turnLog.append([turn(bob, 'accepted later')], 5000);
      await store.turnLog.markEmbedded(ann, [done.id], TAG.id);
      await store.turnLog.markPersisted(ann, done.id, 0.5);
      assert.deepEqual(await store.maintenance.unfinished(2000), [{ user_id: ann, id: waiting.id, session_id: 's1' }]);
      assert.equal((await store.maintenance.unfinished(6000)).length, 2);

      const same = 'said twice under two ids';
      const [d1, d2] = [entry(ann, same), entry(ann, same)];
      await store.longTerm.upsert([d1, d2, entry(bob, same)]);
      const dup = await store.maintenance.duplicateContent();
      assert.equal(dup.groups, 1, "another user's equal text is not a duplicate");
      assert.deepEqual(dup.sample.map((g) => ({ ...g, ids: [...g.ids].sort() })), [{ user_id: ann, content_hash: contentHash(same), ids: [d1.id, d2.id].sort() }]);

      assert.equal(await store.maintenance.live(ann, waiting.id), true, 'a turn-log turn');
      assert.equal(await store.maintenance.live(ann, d1.id), true, 'a long-term entry');
      assert.equal(await store.maintenance.live(bob, waiting.id), false, "another user's id");

      await store.maintenance.markUnembedded(ann, done.id);
      assert.deepEqual((await store.maintenance.unfinished(2000)).map((f) => f.id).sort(), [done.id, waiting.id].sort());
    });

    it('finds vectors of deleted memories and vectors whose text changed', async (t) => {
      const { store, vectors } = await open();
      if (!vectors) return t.skip('this store keeps no vectors');
      const ann = uid();
      const [kept, edited] = [turn(ann, 'kept'), turn(ann, 'edited')];
      await store.turnLog.append([kept, edited]);
      const point = (id: string, content: string) => ({
        id,
        vector: Float32Array.from([1, 0]),
        payload: { user_id: ann, session_id: 's1', role: 'user' as const, name: null, kind: 'turn' as const, content, content_hash: contentHash(content), created_at: kept.created_at },
      });
      await vectors.upsert(TAG, [point(kept.id, 'kept'), point(edited.id, 'edited'), point('deleted-id', 'a deleted memory')]);
      await store.turnLog.updateContent(ann, edited.id, 'edited again', contentHash('edited again'));
      assert.deepEqual(await store.maintenance.orphanVectors(), [{ user_id: ann, id: 'deleted-id', session_id: 's1' }]);
      assert.deepEqual(await store.maintenance.staleVectors(), [{ user_id: ann, id: edited.id, session_id: 's1' }]);
      assert.equal((await store.maintenance.describe()).rows.vectors, 3);
    });
  });
}
