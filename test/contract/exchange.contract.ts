import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { ContentConflictError } from '../../src/errors.js';
import type { DurableStore } from '../../src/ports/durable-store.js';
import type { ExportedTurn } from '../../src/ports/exchange.js';
import { turn, uid } from './durable-records.js';
import { entry } from './long-term.contract.js';

async function all<T>(pages: AsyncIterable<T[]>): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let n = 0;
  for await (const page of pages) {
    n++;
    items.push(...page);
  }
  return { items, pages: n };
}

/** The contract every ExchangeStore passes (see its doc comment in src/ports/exchange.ts). */
export function runExchangeContract(name: string, open: () => Promise<DurableStore>): void {
  describe(`ExchangeStore contract: ${name}`, () => {
    it("reads one user's turns (with their job state) and entries in insertion order, page by page", async () => {
      const store = await open();
      const [ann, bob] = [uid(), uid()];
      const [t0, t1, t2] = [turn(ann, 'one'), turn(ann, 'two'), turn(ann, 'three')];
      await store.turnLog.append([t0, t1]);
      await store.turnLog.append([turn(bob, 'not ann')]);
      await store.turnLog.append([t2]);
      await store.turnLog.markEmbedded(ann, [t0.id], 'hash-v1');
      await store.turnLog.markPersisted(ann, t1.id, 0.7);
      const entries = [entry(ann, 'e1'), entry(ann, 'e2', { kind: 'summary' })];
      await store.longTerm.upsert([entries[1]!]);
      await store.longTerm.upsert([entry(bob, 'not ann either')]);
      await store.longTerm.upsert([entries[0]!]);

      assert.deepEqual(await store.exchange.counts(ann), { turns: 3, entries: 2 });
      const got = await all(store.exchange.turns(ann, 2));
      assert.equal(got.pages, 2);
      assert.deepEqual(got.items, [
        { turn: t0, persisted: false, embedded_with: 'hash-v1' },
        { turn: { ...t1, importance: 0.7 }, persisted: true, embedded_with: null },
        { turn: t2, persisted: false, embedded_with: null },
      ] satisfies ExportedTurn[]);
      const es = await all(store.exchange.entries(ann, 1));
      assert.equal(es.pages, 2);
      assert.deepEqual(es.items, [entries[1], entries[0]], 'insertion order');
      assert.deepEqual(await store.exchange.counts(uid()), { turns: 0, entries: 0 });
      assert.deepEqual((await all(store.exchange.turns(uid()))).items, []);
    });

    it('restores turns with their job state and entries, once: a second restore writes nothing', async () => {
      const store = await open();
      const ann = uid();
      const [persisted, pruned, fresh] = [turn(ann, 'persisted'), turn(ann, 'pruned'), turn(ann, 'fresh')];
      const entries: MemoryEntry[] = [entry(ann, 'persisted', { id: persisted.id }), entry(ann, 'a summary', { kind: 'summary' })];
      const restoring = [
        { turn: persisted, persistedImportance: 0.9, embeddedWith: null },
        { turn: pruned, persistedImportance: null, embeddedWith: 'hash-v1' },
        { turn: fresh, persistedImportance: null, embeddedWith: null },
      ];
      const first = await store.exchange.restore(restoring, entries, 1234);
      assert.deepEqual([...first.turns].sort(), [persisted.id, pruned.id, fresh.id].sort());
      assert.deepEqual([...first.entries].sort(), entries.map((e) => e.id).sort());
      const state = new Map((await all(store.exchange.turns(ann))).items.map((t) => [t.turn.id, t]));
      assert.deepEqual(state.get(persisted.id), { turn: { ...persisted, importance: 0.9 }, persisted: true, embedded_with: null });
      assert.deepEqual(state.get(pruned.id), { turn: pruned, persisted: false, embedded_with: 'hash-v1' });
      assert.deepEqual(state.get(fresh.id), { turn: fresh, persisted: false, embedded_with: null });
      assert.deepEqual(await store.longTerm.get(ann, entries[1]!.id), entries[1]);

      const second = await store.exchange.restore(restoring, entries, 5678);
      assert.deepEqual(second, { turns: [], entries: [] });
      assert.deepEqual(await store.exchange.counts(ann), { turns: 3, entries: 2 });
    });

    it('refuses a turn id held with other content and writes nothing of the restore', async () => {
      const store = await open();
      const ann = uid();
      const held = turn(ann, 'the original text');
      await store.turnLog.append([held]);
      const other = turn(ann, 'a new turn');
      const e = entry(ann, 'an entry of the same restore');
      await assert.rejects(
        store.exchange.restore(
          [
            { turn: other, persistedImportance: null, embeddedWith: null },
            { turn: { ...held, content: 'changed text' }, persistedImportance: null, embeddedWith: null },
          ],
          [e],
          1,
        ),
        (err: unknown) => err instanceof ContentConflictError && err.id === held.id,
      );
      assert.equal(await store.turnLog.get(ann, other.id), null);
      assert.equal(await store.longTerm.get(ann, e.id), null);
      assert.deepEqual(await store.exchange.counts(ann), { turns: 1, entries: 0 });
    });
  });
}
