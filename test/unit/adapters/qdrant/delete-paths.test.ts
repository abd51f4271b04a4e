import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HashEmbedder } from '../../../../src/embedding/hash.js';
import type { Memory } from '../../../../src/memory/memory.js';
import type { Services } from '../../../../src/app.js';
import { startFakeQdrant, type FakeQdrant } from '../../../helpers/fake-qdrant.js';
import { testMemory } from '../../../helpers/services.js';

const DAY = 86_400_000;

describe('delete paths reach Qdrant (against a fake Qdrant HTTP server implementing the REST subset we use)', () => {
  let fake: FakeQdrant;
  let memory: Memory;
  let services: Services;
  before(async () => {
    fake = await startFakeQdrant();
    ({ memory, services } = await testMemory({ qdrant_url: fake.url }));
  });
  after(async () => {
    await services.close();
    await fake.stop();
  });

  /** turn ids held by any collection of the fake, whatever embedder wrote them */
  const storedTurnIds = () => new Set([...fake.collections().values()].flatMap((c) => [...c.points.values()].map((p) => String(p.payload.turn_id))));

  it('memory.delete removes the point from every embedder collection', async () => {
    const { ids } = await memory.addTurns([
      { id: 'del-1', user_id: 'dora', session_id: 's', role: 'user', content: 'My locker code is 4711', importance: 0.9 },
      { id: 'del-2', user_id: 'dora', session_id: 's', role: 'user', content: 'My bike is a green gravel bike', importance: 0.9 },
    ]);
    await memory.idle();
    assert.deepEqual([...(await services.vectors.has(services.embedders.current()!, 'dora', ids))].sort(), ['del-1', 'del-2']);
    // a vector of an earlier model, as a reindex leaves behind without --prune-old
    const old = new HashEmbedder(64);
    await services.vectors.upsert(old, [{ id: 'del-1', vector: old.embedOne('My locker code is 4711'), payload: { user_id: 'dora', session_id: 's', role: 'user', name: null, kind: 'turn', content: 'My locker code is 4711', content_hash: 'x', created_at: new Date().toISOString() } }]);

    const result = await memory.delete('dora', 'del-1');
    assert.equal(result.removed.semantic, true);
    assert.equal(storedTurnIds().has('del-1'), false, 'no collection holds del-1');
    assert.equal(storedTurnIds().has('del-2'), true);
    const r = await memory.retrieve({ query: 'locker code', user_id: 'dora' });
    assert.equal(r.results.some((x) => x.id === 'del-1'), false);
  });

  it('memory.prune removes the points of the pruned entries and keeps the others', async () => {
    const old = new Date(Date.now() - 90 * DAY).toISOString();
    await memory.addTurns([
      { id: 'pr-old-1', user_id: 'erin', session_id: 's1', role: 'user', content: 'I used to live in Lisbon', importance: 0.9, created_at: old },
      { id: 'pr-old-2', user_id: 'erin', session_id: 's1', role: 'user', content: 'My old car was a red Fiat', importance: 0.9, created_at: old },
      { id: 'pr-pinned', user_id: 'erin', session_id: 's1', role: 'user', content: 'My blood type is O negative', importance: 0.9, created_at: old, pinned: true },
      { id: 'pr-new', user_id: 'erin', session_id: 's2', role: 'user', content: 'I live in Berlin now', importance: 0.9 },
    ]);
    await memory.idle();
    const pruned = await memory.prune({ userId: 'erin', olderThanDays: 30 });
    assert.deepEqual(pruned.map((r) => r.id).sort(), ['pr-old-1', 'pr-old-2']);
    const stored = storedTurnIds();
    assert.equal(stored.has('pr-old-1') || stored.has('pr-old-2'), false);
    assert.ok(stored.has('pr-pinned') && stored.has('pr-new'));
    assert.equal(await services.vectors.count(services.embedders.current()!, { user_id: 'erin' }), 2);
  });
});
