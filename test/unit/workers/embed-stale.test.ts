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
    const turn = s.turnLog.get('ann', id)!;
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
    const turn = s.turnLog.get('ann', id)!;
    const embedOne = embedder.embedOne.bind(embedder);
    embedder.embedOne = async (text: string) => {
      s.turnLog.delete('ann', [id]); // the delete lands mid-embedding
      return embedOne(text);
    };
    const job = { turn_id: id, user_id: 'ann', session_id: 's', role: 'user' as const, name: null, kind: 'turn' as const, content: turn.content, content_hash: turn.content_hash, created_at: turn.created_at };
    assert.deepEqual(await processEmbed(job, s.processorDeps), { skipped: 'deleted or edited while it was embedded' });
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 0);
    await memory.close();
  });
});
