import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { processEmbed } from '../../../workers/embed.js';
import { testMemory } from '../../helpers/services.js';

describe('embed processor and concurrent deletes/edits', () => {
  it('does not bring back the vector of a turn deleted before its embed job ran', async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    await s.embedders.ready();
    const { ids } = await memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: 'My locker code is 7731' });
    const id = ids[0]!;
    const turn = (await s.turnLog.get('ann', id))!;
    await memory.delete('ann', id);
    const job = { turn_id: id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content: turn.content, content_hash: turn.content_hash, created_at: turn.created_at };
    assert.deepEqual(await processEmbed(job, s.processorDeps), { skipped: 'deleted or edited since it was enqueued' });
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 0);
    await memory.close();
  });

  it('removes its vector when the turn is deleted while the model runs', async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    const embedder = (await s.embedders.ready())!;
    const { ids } = await memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: 'My bike is the red one' });
    const id = ids[0]!;
    const turn = (await s.turnLog.get('ann', id))!;
    const embedOne = embedder.embedOne.bind(embedder);
    embedder.embedOne = async (text: string) => {
      await s.turnLog.delete('ann', [id]); // the delete lands mid-embedding
      return embedOne(text);
    };
    const job = { turn_id: id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content: turn.content, content_hash: turn.content_hash, created_at: turn.created_at };
    assert.deepEqual(await processEmbed(job, s.processorDeps), { skipped: 'deleted while it was embedded' });
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 0);
    await memory.close();
  });

  it('completes (no failed job to keep its text) when the embedder fails after the turn was deleted; fails when the turn is still there', async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    const embedder = (await s.embedders.ready())!;
    const { ids } = await memory.addTurns([
      { id: 'gone', user_id: 'ann', session_id: 's', role: 'user', content: 'My safe code is 1234' },
      { id: 'kept', user_id: 'ann', session_id: 's', role: 'user', content: 'My gym code is 5678' },
    ]);
    const jobOf = async (id: string) => {
      const turn = (await s.turnLog.get('ann', id))!;
      return { turn_id: id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content: turn.content, content_hash: turn.content_hash, created_at: turn.created_at };
    };
    const [gone, kept] = [await jobOf(ids[0]!), await jobOf(ids[1]!)];
    embedder.embedOne = async (text: string) => {
      // the delete lands while the embedding server fails
      if (text === gone.content) await memory.delete('ann', 'gone');
      throw new Error('the embedding server is down');
    };
    assert.deepEqual(await processEmbed(gone, s.processorDeps), { skipped: 'deleted or edited while it was embedded' });
    await assert.rejects(processEmbed(kept, s.processorDeps), /the embedding server is down/);
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 0);
    await memory.close();
  });

  it("an edit landing while the model runs ends with the new text's vector, even when the edit's job wrote it first", async () => {
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    const embedder = (await s.embedders.ready())!;
    const { ids } = await memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: 'My bike is the red one', importance: 0.9 });
    const id = ids[0]!;
    const { processPersist } = await import('../../../workers/persist.js');
    await processPersist({ user_id: 'ann', turn_id: id }, s.processorDeps);
    const turn = (await s.turnLog.get('ann', id))!;
    const job = { turn_id: id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content: turn.content, content_hash: turn.content_hash, created_at: turn.created_at };
    const embedOne = embedder.embedOne.bind(embedder);
    let edited = false;
    embedder.embedOne = async (text: string) => {
      if (!edited) {
        edited = true;
        // the edit lands mid-embedding, and its own embed job runs to completion before this one resumes
        await memory.edit('ann', id, { content: 'My bike is the blue one' });
        const fresh = (await s.turnLog.get('ann', id))!;
        await processEmbed({ ...job, content: fresh.content, content_hash: fresh.content_hash }, s.processorDeps);
      }
      return embedOne(text);
    };
    assert.deepEqual(await processEmbed(job, s.processorDeps), { embedder: embedder.id });
    const [hit] = await s.vectors.search(embedder, await embedOne('My bike is the blue one'), { user_id: 'ann' }, 1);
    assert.equal(hit?.payload.content, 'My bike is the blue one', 'the vector holds the edited text');
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 1);
    await memory.close();
  });
});
