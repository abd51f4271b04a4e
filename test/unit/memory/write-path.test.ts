import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdConflictError, ValidationError } from '../../../src/errors.js';
import { testMemory } from '../../helpers/services.js';

describe('write path', () => {
  it('stores a turn in the turn log, the short-term tier, and (after its jobs) long-term and semantic', async () => {
    const { memory, services: s } = await testMemory();
    const r = await memory.addTurns({ user_id: 'ann', session_id: 's1', role: 'user', name: 'Ann', content: 'I live in Lisbon with my cat Miso' });
    assert.equal(r.accepted, 1);
    const id = r.ids[0]!;
    assert.equal(s.turnLog.get(id)?.content, 'I live in Lisbon with my cat Miso');
    assert.deepEqual((await s.shortTerm.recent('ann', 's1')).map((t) => t.id), [id], 'short-term is written before the call returns');
    await memory.idle();
    assert.equal((await s.longTerm.get(id))?.name, 'Ann');
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 1);
    assert.deepEqual(s.turnLog.counts(), { total: 1, pending_embed: 0, pending_persist: 0 });
    await memory.close();
  });

  it('rejects a batch with one bad turn whole, naming the field, storing nothing', async () => {
    const { memory, services: s } = await testMemory({ max_turn_chars: 50 });
    const bad = [
      { session_id: 's', role: 'user', content: 'fine' },
      { session_id: 's', role: 'robot', content: 'x' },
      { session_id: 's', role: 'user', content: 'y'.repeat(51) },
      { session_id: 's', role: 'user', content: '   ' },
      { session_id: '', role: 'user', content: 'z' },
      { session_id: 's', role: 'user', content: 'bad \ud800 surrogate' },
      { session_id: 's', role: 'user', content: 'x', importance: 2 },
      { session_id: 's', role: 'user', content: 'x', metadata: { blob: 'm'.repeat(9000) } },
      { session_id: 's', role: 'user', content: 'x', surprise: true },
    ];
    await assert.rejects(memory.addTurns(bad), (e: unknown) => {
      assert.ok(e instanceof ValidationError);
      const paths = e.details!.map((d) => d.path);
      for (const p of ['1.role', '2.content', '3.content', '4.session_id', '5.content', '6.importance', '7.metadata']) assert.ok(paths.includes(p), `names ${p}: ${paths.join(', ')}`);
      assert.ok(e.details!.some((d) => d.path.startsWith('8') && /surprise/.test(d.message)), 'names the unknown key');
      return true;
    });
    assert.equal(s.turnLog.counts().total, 0);
    assert.deepEqual(await s.shortTerm.recent('default', 's'), []);
    await memory.close();
  });

  it('stores the same id once, and refuses an id owned by another user without writing the batch', async () => {
    const { memory, services: s } = await testMemory();
    const t = { id: 'turn-1', user_id: 'ann', session_id: 's', role: 'user', content: 'hello there, I am Ann' };
    assert.equal((await memory.addTurns(t)).accepted, 1);
    const again = await memory.addTurns([t, { ...t }]);
    assert.deepEqual(again, { ids: ['turn-1', 'turn-1'], accepted: 0, duplicates: 2 });
    await assert.rejects(
      memory.addTurns([{ session_id: 's', role: 'user', user_id: 'bob', content: 'new one' }, { ...t, user_id: 'bob' }]),
      IdConflictError,
    );
    assert.equal(s.turnLog.counts().total, 1, 'the conflicting batch wrote nothing');
    await memory.idle();
    assert.equal(await s.longTerm.count(), 1);
    await memory.close();
  });

  it('commits concurrent single-turn writes as one transaction, and a conflicting one fails alone', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns({ id: 'owned', user_id: 'bob', session_id: 's', role: 'user', content: 'bob says hi' });
    // count the outermost transactions (commits) the turn writes make
    let commits = 0;
    const transaction = s.db.transaction.bind(s.db);
    (s.db as { transaction: unknown }).transaction = (fn: () => unknown) => {
      const tx = transaction(fn);
      const counted = (run: () => unknown) => () => {
        const outer = !s.db.inTransaction;
        const r = run();
        if (outer) commits++;
        return r;
      };
      return Object.assign(counted(() => tx()), { immediate: counted(() => tx.immediate()), deferred: counted(() => tx.deferred()), exclusive: counted(() => tx.exclusive()) });
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: `turn number ${i}` })));
    assert.deepEqual(results.map((r) => r.accepted), new Array(20).fill(1));
    assert.equal(commits, 1, 'twenty concurrent writes, one commit');
    const mixed = [
      ...Array.from({ length: 5 }, (_, i) => memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: `more ${i}` })),
      memory.addTurns({ id: 'owned', user_id: 'ann', session_id: 's', role: 'user', content: 'not yours' }),
    ];
    const settled = await Promise.allSettled(mixed);
    assert.deepEqual(settled.slice(0, 5).map((r) => r.status), new Array(5).fill('fulfilled'));
    assert.ok(settled[5]!.status === 'rejected' && settled[5]!.reason instanceof IdConflictError);
    assert.equal(s.turnLog.counts().total, 26, 'every accepted turn is in the log, the conflicting one is not');
    assert.equal(s.turnLog.get('owned')?.user_id, 'bob');
    await memory.close();
  });

  it('acknowledges a turn when the short-term store and the queue fail, and the reconciler catches up', async () => {
    const { memory, services: s } = await testMemory({}, { reconcile: false });
    const shortTermPush = s.shortTerm.push.bind(s.shortTerm);
    const queueAdd = s.queue.add.bind(s.queue);
    s.shortTerm.push = async () => {
      throw new Error('short-term down');
    };
    s.queue.add = async () => {
      throw new Error('queue down');
    };
    const r = await memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: 'My passport number ends in 4411' });
    assert.equal(r.accepted, 1);
    assert.deepEqual(s.turnLog.counts(), { total: 1, pending_embed: 1, pending_persist: 1 });
    s.shortTerm.push = shortTermPush;
    s.queue.add = queueAdd;
    await s.embedders.ready();
    assert.equal(await s.reconciler.run(Date.now()), 2);
    await memory.idle();
    assert.deepEqual(s.turnLog.counts(), { total: 1, pending_embed: 0, pending_persist: 0 });
    assert.equal((await s.longTerm.get(r.ids[0]!))?.content, 'My passport number ends in 4411');
    await memory.close();
  });

  it('finds what the user said in an earlier session from a new one, and nobody else\'s', async () => {
    const { memory } = await testMemory();
    await memory.addTurns([
      { user_id: 'ann', session_id: 'old', role: 'user', content: 'I am allergic to peanuts' },
      { user_id: 'bob', session_id: 'old', role: 'user', content: 'I am allergic to shellfish and peanuts' },
    ]);
    await memory.idle();
    const r = await memory.retrieve({ query: 'what am I allergic to?', user_id: 'ann', session_id: 'new' });
    assert.equal(r.results[0]?.content, 'I am allergic to peanuts');
    assert.ok(r.results.every((x) => x.user_id === 'ann'));
    assert.match(r.prompt_blocks, /allergic to peanuts/);
    await memory.close();
  });
});
