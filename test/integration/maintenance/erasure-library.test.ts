import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Services } from '../../../src/app.js';
import { ContentConflictError, ValidationError } from '../../../src/errors.js';
import { testMemory } from '../../helpers/services.js';

const turn = (user: string, session: string, content: string, extra: Record<string, unknown> = {}) => ({ user_id: user, session_id: session, role: 'user', content, importance: 0.9, ...extra });

function countsOf(s: Services, user: string, session?: string) {
  const where = session === undefined ? 'user_id = ?' : 'user_id = ? AND session_id = ?';
  const args = session === undefined ? [user] : [user, session];
  const n = (table: string) => (s.db!.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...args) as { n: number }).n;
  return { turns: n('turns'), entries: n('entries'), vectors: n('vectors') };
}

/** The library side of docs/architecture.md, maintenance's erasures and export, on the embedded defaults (one process). */
describe('Memory: clearSession, clearAll, forget, export/import', () => {
  it('clearSession erases one session from every tier, pinned included, and nothing else', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns([turn('ann', 'a', 'Ann likes green tea'), turn('ann', 'a', 'Pinned: Ann is vegetarian', { pinned: true }), turn('ann', 'b', 'Ann flies on Monday'), turn('bob', 'a', 'Bob likes coffee')]);
    await memory.idle();
    const r = await memory.clearSession('ann', 'a');
    assert.deepEqual([r.long_term.turn, r.turn_log, r.short_term, r.vectors], [2, 2, 1, 2]);
    assert.deepEqual(countsOf(s, 'ann', 'a'), { turns: 0, entries: 0, vectors: 0 });
    assert.deepEqual(await s.shortTerm.recent('ann', 'a'), []);
    assert.deepEqual(countsOf(s, 'ann', 'b'), { turns: 1, entries: 1, vectors: 1 });
    assert.deepEqual(countsOf(s, 'bob', 'a'), { turns: 1, entries: 1, vectors: 1 });
    await assert.rejects(memory.clearSession('', 'a'), ValidationError);
    await memory.close();
  });

  it('forget drops queued jobs holding the user, so nothing is written back afterwards', async () => {
    // no workers yet: the jobs wait in the in-process queue
    const { memory, services: s } = await testMemory({}, { runWorkers: false, reconcile: false });
    await memory.addTurns([turn('ann', 'a', 'Ann secret plan one'), turn('ann', 'a', 'Ann secret plan two'), turn('bob', 'b', 'Bob plan')]);
    const r = await memory.forget('ann');
    assert.equal(r.jobs, 4, 'two embed and two persist jobs');
    const { createProcessors } = await import('../../../workers/processors.js');
    await s.queue.consume(createProcessors(s.processorDeps), { queues: ['embed', 'persist'], concurrency: 4 });
    await memory.idle();
    assert.deepEqual(countsOf(s, 'ann'), { turns: 0, entries: 0, vectors: 0 });
    assert.deepEqual(countsOf(s, 'bob'), { turns: 1, entries: 1, vectors: 1 }, "bob's jobs ran");
    await memory.close();
  });

  it("another process's forget and clear leave nothing of theirs in this one's vector index, neither in its answers nor in its memory", async () => {
    const a = await testMemory();
    // a second process on the same file (a serve beside the CLI): it reads, A writes and erases
    const b = await testMemory({ sqlite_path: a.services.config.sqlite_path }, { runWorkers: false, reconcile: false });
    await a.memory.addTurns([turn('ann', 'a', 'Ann keeps bees on the roof'), turn('ann', 'b', 'Ann sold the bees in May'), turn('bob', 'c', 'Bob keeps bees too')]);
    await a.memory.idle();
    const texts = async (user: string) => (await b.memory.retrieve({ user_id: user, query: 'bees on the roof', top_k: 8 })).results.map((r) => r.content);
    const held = () => (b.services.vectors as unknown as { stats(): Array<{ vectors: number }> }).stats()[0]!.vectors;
    assert.equal((await texts('ann')).length, 2, 'read (and loaded into memory) before the erasures');
    assert.equal(held(), 3);
    await a.memory.clearSession('ann', 'b');
    assert.deepEqual(await texts('ann'), ['Ann keeps bees on the roof']);
    await a.memory.forget('ann');
    assert.deepEqual(await texts('ann'), [], 'nothing of ann in any tier');
    assert.equal(held(), 1, "only bob's vector is left in memory");
    assert.deepEqual(await texts('bob'), ['Bob keeps bees too']);
    await Promise.all([a.memory.close(), b.memory.close()]);
  });

  it('clearAll erases every user', async () => {
    const { memory, services: s } = await testMemory();
    await memory.addTurns([turn('ann', 'a', 'Ann one'), turn('bob', 'b', 'Bob one')]);
    await memory.idle();
    const r = await memory.clearAll();
    assert.equal(r.turn_log, 2);
    assert.deepEqual(countsOf(s, 'ann'), { turns: 0, entries: 0, vectors: 0 });
    assert.deepEqual(countsOf(s, 'bob'), { turns: 0, entries: 0, vectors: 0 });
    await memory.close();
  });

  it('import of ids another user holds writes the importing user\'s own; a conflict with their own ids writes nothing', async () => {
    const { memory } = await testMemory();
    await memory.addTurns([turn('bob', 'b', 'Bob owns this id', { id: 'shared-id' }), turn('ann', 's', 'Ann said this first', { id: 'ann-2' })]);
    await memory.idle();
    const now = new Date().toISOString();
    const records = [
      { format: 'neuralcleave-export', version: 1, user_id: 'ann', exported_at: now },
      { type: 'turn', id: 'ann-1', user_id: 'ann', session_id: 's', role: 'user', name: null, content: 'Ann first', created_at: now, importance: 0.9, pinned: false, metadata: null, persisted: false, embedded_with: null, vector: null },
      { type: 'turn', id: 'shared-id', user_id: 'ann', session_id: 's', role: 'user', name: null, content: 'Ann uses the same id', created_at: now, importance: 0.9, pinned: false, metadata: null, persisted: false, embedded_with: null, vector: null },
    ];
    const conflicting = [...records, { ...records[1], id: 'ann-2', content: 'Ann said something else' }];
    await assert.rejects(memory.importRecords(conflicting), ContentConflictError);
    assert.equal((await memory.services.turnLog.get('ann', 'ann-1')), null, 'all or nothing');
    const report = await memory.importRecords(records);
    assert.equal(report.turns.new, 2);
    assert.equal((await memory.services.turnLog.get('ann', 'shared-id'))?.content, 'Ann uses the same id');
    assert.equal((await memory.services.turnLog.get('bob', 'shared-id'))?.content, 'Bob owns this id', "bob's turn is untouched");
    // another user's records in the file are refused by name
    await assert.rejects(memory.importRecords([records[0], { ...records[1], user_id: 'bob' }]), (e: unknown) => e instanceof ValidationError && /record 2: user_id/.test(e.message));
    await memory.close();
  });

  it('export streams a header and every turn and entry of one user only', async () => {
    const { memory } = await testMemory();
    await memory.addTurns([turn('ann', 'a', 'Ann keeps a cat named Miso', { metadata: { source: 'chat' } }), turn('bob', 'b', 'Bob keeps a dog')]);
    await memory.idle();
    const records = [];
    for await (const r of memory.exportUser('ann')) records.push(r as Record<string, unknown>);
    assert.equal(records[0]!.format, 'neuralcleave-export');
    assert.deepEqual(records[0]!.counts, { turns: 1, entries: 1, short_term: 1 });
    assert.deepEqual(records.slice(1).map((r) => r.type), ['turn', 'entry', 'short_term']);
    assert.ok(records.slice(1).every((r) => r.type === 'short_term' || r.user_id === 'ann'));
    assert.deepEqual(records[1]!.metadata, { source: 'chat' });
    assert.equal(records[1]!.vector, true);
    assert.equal(records[1]!.persisted, true);
    await memory.close();
  });
});
