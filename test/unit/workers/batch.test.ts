import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EmbedJob } from '../../../queues/payloads.js';
import { contentHash } from '../../../src/domain/hash.js';
import type { Turn } from '../../../src/domain/turn.js';
import { processEmbedBatch } from '../../../workers/embed.js';
import { processPersistBatch } from '../../../workers/persist.js';
import { testMemory } from '../../helpers/services.js';

const jobOf = (t: Turn): EmbedJob => ({
  turn_id: t.id, user_id: t.user_id, session_id: t.session_id, role: t.role, name: t.name, kind: 'turn', content: t.content, content_hash: t.content_hash, created_at: t.created_at,
});

describe('batched embed and persist processors', () => {
  it('settles each job of an embed batch as it would alone: deleted before, deleted and edited mid-model, failing, and plain ones', async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    const embedder = (await s.embedders.ready())!;
    const texts = ['gone before', 'gone during', 'edited during', 'the model chokes on this', 'plain one', 'plain two'];
    const { ids } = await memory.addTurns(texts.map((content) => ({ user_id: 'ann', session_id: 's', role: 'user', content })));
    const turns = await Promise.all(ids.map(async (id) => (await s.turnLog.get('ann', id))!));
    const jobs = turns.map(jobOf);
    await s.turnLog.delete('ann', [ids[0]!]);
    const embedOne = embedder.embedOne.bind(embedder);
    let landed = false;
    embedder.embedOne = async (text: string) => {
      if (!landed) {
        landed = true; // the delete and the edit land while the model runs
        await s.turnLog.delete('ann', [ids[1]!]);
        await s.turnLog.updateContent('ann', ids[2]!, 'edited during: the new text', contentHash('edited during: the new text'));
      }
      if (text === 'the model chokes on this') throw new Error('model failed on this text');
      return embedOne(text);
    };
    const outcomes = await processEmbedBatch(jobs, s.processorDeps);
    assert.deepEqual(outcomes[0], { ok: true, value: { skipped: 'deleted or edited since it was enqueued' } });
    assert.deepEqual(outcomes[1], { ok: true, value: { skipped: 'deleted while it was embedded' } });
    assert.deepEqual(outcomes[2], { ok: true, value: { embedder: embedder.id } }, 'the edited turn is embedded with its new text');
    assert.equal(outcomes[3]!.ok, false);
    assert.match(((outcomes[3] as { error: Error }).error).message, /model failed/);
    assert.deepEqual(outcomes[4], { ok: true, value: { embedder: embedder.id } });
    assert.deepEqual(outcomes[5], { ok: true, value: { embedder: embedder.id } });

    const held = await s.vectors.has(embedder, 'ann', ids);
    assert.deepEqual([...held].sort(), [ids[2]!, ids[4]!, ids[5]!].sort(), 'vectors only for the turns still there and embedded');
    const [hit] = await s.vectors.search(embedder, await embedOne('edited during: the new text'), { user_id: 'ann' }, 1);
    assert.equal(hit?.payload.content, 'edited during: the new text');
    assert.equal(await s.turnLog.unfinished([{ user_id: 'ann', id: ids[3]! }], true), 1, 'the failed job leaves its turn pending, for its retry');
    assert.equal((await s.turnLog.pending('embed', Date.now() + 1000, 100)[Symbol.asyncIterator]().next()).value?.some((t: Turn) => t.id === ids[4]), false, 'the plain ones are marked embedded');
    await memory.close();
  });

  it('persists a batch in one pass: stored, below the threshold and deleted turns each settled, a failing write failing alone', async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    const { ids } = await memory.addTurns([
      { user_id: 'bo', session_id: 's', role: 'user', content: 'My sister Ana is a dentist in Porto.', importance: 0.9 },
      { user_id: 'bo', session_id: 's', role: 'user', content: 'ok', importance: 0.05 },
      { user_id: 'bo', session_id: 's', role: 'user', content: 'deleted before its job', importance: 0.9 },
      { user_id: 'bo', session_id: 's', role: 'user', content: 'the store refuses this one', importance: 0.9 },
    ]);
    await s.turnLog.delete('bo', [ids[2]!]);
    const deps = {
      ...s.processorDeps,
      longTerm: {
        persistTurn: (e: Parameters<typeof s.longTerm.persistTurn>[0]) =>
          e.content === 'the store refuses this one' ? Promise.reject(new Error('disk said no')) : s.longTerm.persistTurn(e),
      },
    };
    const outcomes = await processPersistBatch(ids.map((id) => ({ user_id: 'bo', turn_id: id })), deps);
    assert.deepEqual(outcomes.slice(0, 3), [
      { ok: true, value: { stored: true, importance: 0.9 } },
      { ok: true, value: { stored: false, importance: 0.05 } },
      { ok: true, value: null },
    ]);
    assert.equal(outcomes[3]!.ok, false);
    assert.ok(await s.longTerm.get('bo', ids[0]!));
    assert.equal(await s.longTerm.get('bo', ids[1]!), null);
    assert.equal(await s.turnLog.unfinished([{ user_id: 'bo', id: ids[0]! }, { user_id: 'bo', id: ids[1]! }], false), 0, 'both marked persisted');
    assert.equal(await s.turnLog.unfinished([{ user_id: 'bo', id: ids[3]! }], false), 1, 'the failed one stays pending');
    await memory.close();
  });
});
