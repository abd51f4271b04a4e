import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContentConflictError, ValidationError } from '../../../src/errors.js';
import { testMemory } from '../../helpers/services.js';

describe('write path', () => {
  it('stores a turn in the turn log, the short-term tier, and (after its jobs) long-term and semantic', async () => {
    const { memory, services: s } = await testMemory();
    const r = await memory.addTurns({ user_id: 'ann', session_id: 's1', role: 'user', name: 'Ann', content: 'I live in Lisbon with my cat Miso' });
    assert.equal(r.accepted, 1);
    const id = r.ids[0]!;
    assert.equal((await s.turnLog.get('ann', id))?.content, 'I live in Lisbon with my cat Miso');
    assert.deepEqual((await s.shortTerm.recent('ann', 's1')).map((t) => t.id), [id], 'short-term is written before the call returns');
    await memory.idle();
    assert.equal((await s.longTerm.get('ann', id))?.name, 'Ann');
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann' }), 1);
    assert.deepEqual((await s.turnLog.counts()), { total: 1, pending_embed: 0, pending_persist: 0 });
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
    assert.equal((await s.turnLog.counts()).total, 0);
    assert.deepEqual(await s.shortTerm.recent('default', 's'), []);
    await memory.close();
  });

  it('stores an exact re-send once; the same id with other content is content_conflict naming it, writing nothing', async () => {
    const { memory, services: s } = await testMemory();
    const t = { id: 'turn-1', user_id: 'ann', session_id: 's', role: 'user', content: 'hello there, I am Ann' };
    assert.equal((await memory.addTurns(t)).accepted, 1);
    const again = await memory.addTurns([t, { ...t }]);
    assert.deepEqual(again, { ids: ['turn-1', 'turn-1'], accepted: 0, duplicates: 2 });
    await assert.rejects(memory.addTurns([{ session_id: 's', role: 'user', user_id: 'ann', content: 'new one' }, { ...t, content: 'hello, I am Ann' }]), (e: unknown) => {
      assert.ok(e instanceof ContentConflictError);
      assert.equal(e.code, 'content_conflict');
      assert.match(e.message, /"turn-1"/);
      assert.deepEqual(e.details?.map((d) => d.path), ['1.id']);
      return true;
    });
    await assert.rejects(memory.addTurns({ ...t, role: 'assistant' }), ContentConflictError, 'another role is other content too');
    await assert.rejects(memory.addTurns([{ ...t, id: 'twin' }, { ...t, id: 'twin', content: 'changed mid-batch' }]), ContentConflictError);
    assert.equal((await s.turnLog.counts()).total, 1, 'the conflicting batches wrote nothing');
    await memory.idle();
    assert.equal(await s.longTerm.count(), 1);
    await memory.close();
  });

  it('commits concurrent single-turn writes as one transaction, and a conflicting one fails alone', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns({ id: 'owned', user_id: 'bob', session_id: 's', role: 'user', content: 'bob says hi' });
    // its jobs' writes commit in a lane of their own (TransactionBatcher.later), not counted here
    await memory.idle();
    // count the outermost transactions that wrote (commits) the turn writes make; reads in one
    // transaction (the short-term guard's, the jobs') commit nothing
    let commits = 0;
    const transaction = s.db!.transaction.bind(s.db!);
    const changes = s.db!.prepare('SELECT total_changes()').pluck();
    (s.db! as { transaction: unknown }).transaction = (fn: () => unknown) => {
      const tx = transaction(fn);
      const counted = (run: () => unknown) => () => {
        const outer = !s.db!.inTransaction;
        const before = changes.get();
        const r = run();
        if (outer && changes.get() !== before) commits++;
        return r;
      };
      return Object.assign(counted(() => tx()), { immediate: counted(() => tx.immediate()), deferred: counted(() => tx.deferred()), exclusive: counted(() => tx.exclusive()) });
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: `turn number ${i}` })));
    assert.deepEqual(results.map((r) => r.accepted), new Array(20).fill(1));
    assert.equal(commits, 1, 'twenty concurrent writes, one commit');
    const mixed = [
      ...Array.from({ length: 5 }, (_, i) => memory.addTurns({ user_id: 'ann', session_id: 's', role: 'user', content: `more ${i}` })),
      memory.addTurns({ id: 'owned', user_id: 'bob', session_id: 's', role: 'user', content: 'bob changed his text' }),
    ];
    const settled = await Promise.allSettled(mixed);
    assert.deepEqual(settled.slice(0, 5).map((r) => r.status), new Array(5).fill('fulfilled'));
    assert.ok(settled[5]!.status === 'rejected' && settled[5]!.reason instanceof ContentConflictError);
    assert.equal((await s.turnLog.counts()).total, 26, 'every accepted turn is in the log, the conflicting one is not');
    assert.equal((await s.turnLog.get('bob', 'owned'))?.content, 'bob says hi');
    await memory.close();
  });

  it('writes the short-term tier and enqueues the jobs of concurrent accepts together, each caller still waiting for them', async () => {
    const { memory, services: s } = await testMemory();
    const calls = { push: 0, add: new Map<string, number>() };
    const push = s.shortTerm.push.bind(s.shortTerm);
    s.shortTerm.push = (turns) => {
      calls.push++;
      return push(turns);
    };
    const add = s.queue.add.bind(s.queue);
    s.queue.add = ((queue: string, jobs: never) => {
      calls.add.set(queue, (calls.add.get(queue) ?? 0) + 1);
      return add(queue as never, jobs);
    }) as typeof s.queue.add;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => memory.addTurns({ user_id: `u${i % 3}`, session_id: `s${i % 2}`, role: 'user', content: `together ${i}` })));
    assert.equal(calls.push, 1, 'one short-term write for twelve concurrent accepts');
    assert.deepEqual(Object.fromEntries(calls.add), { embed: 1, persist: 1 });
    for (const [i, r] of results.entries()) {
      const recent = await s.shortTerm.recent(`u${i % 3}`, `s${i % 2}`);
      assert.ok(recent.some((t) => t.id === r.ids[0]), `turn ${i} is in its session's short-term list when its call returns`);
    }
    await memory.idle();
    assert.deepEqual(await s.turnLog.counts(), { total: 12, pending_embed: 0, pending_persist: 0 }, 'every job ran');
    await memory.close();
  });

  it('scopes ids to their user: another user may use the same id, and neither write touches the other', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns({ id: 'same', user_id: 'ann', session_id: 's', role: 'user', content: 'I am Ann and I live in Oslo' });
    const bob = await memory.addTurns({ id: 'same', user_id: 'bob', session_id: 's', role: 'user', content: 'I am Bob and I live in Rome' });
    assert.equal(bob.accepted, 1, "bob's id is his own, whatever ann holds");
    await memory.idle();
    assert.equal((await s.longTerm.get('ann', 'same'))?.content, 'I am Ann and I live in Oslo');
    assert.equal((await s.longTerm.get('bob', 'same'))?.content, 'I am Bob and I live in Rome');
    await memory.delete('ann', 'same');
    assert.equal((await s.longTerm.get('bob', 'same'))?.content, 'I am Bob and I live in Rome', "ann's delete leaves bob's memory");
    assert.equal((await s.turnLog.get('bob', 'same'))?.content, 'I am Bob and I live in Rome');
    await memory.close();
  });

  it('stores equal text under a new id as a memory of its own', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns([
      { id: 'first', user_id: 'ann', session_id: 's', role: 'user', content: 'My sister Ines is a nurse in Braga' },
      { id: 'second', user_id: 'ann', session_id: 's', role: 'user', content: 'My sister Ines is a nurse in Braga' },
    ]);
    await memory.idle();
    assert.ok(await s.longTerm.get('ann', 'first'));
    assert.ok(await s.longTerm.get('ann', 'second'), 'the second is stored, not hidden behind the first');
    await memory.delete('ann', 'first');
    assert.equal((await memory.get('ann', 'second'))?.content, 'My sister Ines is a nurse in Braga');
    const hits = (await memory.retrieve({ query: 'what is my sister job', user_id: 'ann' })).results;
    assert.deepEqual([...new Set(hits.filter((h) => /Ines/.test(h.content)).map((h) => h.id))], ['second']);
    await memory.close();
  });

  it('refuses content of only zero-width characters, and created_at outside 1970 to one day ahead', async () => {
    const { memory, services: s } = await testMemory();
    const base = { user_id: 'ann', session_id: 's', role: 'user' };
    for (const content of ['\u200b', '\u200b\u200c\u200d', ' \ufeff\u2060 ', '\u00ad', '\u3164']) {
      await assert.rejects(memory.addTurns({ ...base, content }), (e: unknown) => e instanceof ValidationError && e.details!.some((d) => d.path === 'content' && /blank/.test(d.message)), JSON.stringify(content));
    }
    for (const created_at of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1969-12-31T23:59:59Z', new Date(Date.now() + 2 * 86_400_000).toISOString()]) {
      await assert.rejects(memory.addTurns({ ...base, content: 'hello', created_at }), (e: unknown) => e instanceof ValidationError && e.details!.some((d) => d.path === 'created_at'), created_at);
    }
    assert.equal((await memory.addTurns({ ...base, content: 'zero\u200bwidth inside is fine', created_at: '1970-01-01T00:00:00Z' })).accepted, 1);
    assert.equal((await memory.addTurns({ ...base, content: 'a little ahead is clock skew', created_at: new Date(Date.now() + 3_600_000).toISOString() })).accepted, 1);
    assert.equal((await s.turnLog.counts()).total, 2);
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
    assert.deepEqual((await s.turnLog.counts()), { total: 1, pending_embed: 1, pending_persist: 1 });
    s.shortTerm.push = shortTermPush;
    s.queue.add = queueAdd;
    await s.embedders.ready();
    assert.equal(await s.reconciler.run(Date.now()), 2);
    await memory.idle();
    assert.deepEqual((await s.turnLog.counts()), { total: 1, pending_embed: 0, pending_persist: 0 });
    assert.equal((await s.longTerm.get('ann', r.ids[0]!))?.content, 'My passport number ends in 4411');
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
