import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Services } from '../../../src/app.js';
import { Archiver, archiveIdFor, type ArchiveSummarizer } from '../../../src/archival/archiver.js';
import { SqliteArchiveStore } from '../../../src/adapters/sqlite/archive-store.js';
import { testMemory, silentLogger } from '../../helpers/services.js';

const DAY = 86_400_000;
const daysAgo = (d: number, plusMinutes = 0) => new Date(Date.now() - d * DAY + plusMinutes * 60_000).toISOString();

/** Every row of every memory table, for "a second run changes nothing". */
function snapshot(s: Services) {
  const all = (sql: string) => s.db!.prepare(sql).all();
  return {
    turns: all('SELECT id, user_id, session_id, content, pinned, persisted_at, embedded_with FROM turns ORDER BY id'),
    entries: all('SELECT * FROM entries ORDER BY id'),
    vectors: all('SELECT id, embedder, user_id, session_id, kind, content FROM vectors ORDER BY id, embedder'),
  };
}

async function conversation(s: Services, user: string, session: string, ageDays: number, opts: { pinned?: string } = {}): Promise<string[]> {
  const turns = [
    { role: 'user', content: `I am planning a trip to Kyoto in ${session}; my budget is 2400 euros.` },
    { role: 'assistant', content: 'Kyoto is lovely in autumn. Would you like temple recommendations?' },
    { role: 'user', content: 'Yes please, and remember I am allergic to peanuts.' },
    { role: 'assistant', content: 'Noted: no peanuts. Start with Fushimi Inari early in the morning.' },
    { role: 'user', content: 'ok thanks' },
  ].map((t, i) => ({ ...t, user_id: user, session_id: session, created_at: daysAgo(ageDays, i) }));
  if (opts.pinned) turns.push({ role: 'user', content: opts.pinned, user_id: user, session_id: session, created_at: daysAgo(ageDays, 10), pinned: true } as (typeof turns)[number]);
  const r = await s.writePath.addTurns(turns);
  return r.ids;
}

describe('archival', () => {
  it('archives a session inactive for 31 days, not one of 29; keeps pinned entries; a second run changes nothing', async () => {
    const { memory, services: s } = await testMemory();
    const oldIds = await conversation(s, 'ann', 'old', 31, { pinned: 'My passport number ends in 4417, keep this.' });
    const pinnedId = oldIds[oldIds.length - 1]!;
    const recentIds = await conversation(s, 'ann', 'recent', 29);
    await conversation(s, 'bob', 'bobs', 45);
    await memory.idle();

    const recentBefore = {
      entries: await s.longTerm.recent('ann', { sessionId: 'recent', limit: 100 }),
      turns: (await s.turnLog.session('ann', 'recent')),
      vectors: await s.vectors.count(undefined, { user_id: 'ann', session_id: 'recent' }),
    };
    assert.ok(recentBefore.entries.length > 0 && recentBefore.vectors === recentIds.length);

    const report = await s.archiver.run();
    await memory.idle();
    assert.equal(report.archived, 2, 'ann/old and bob/bobs');
    assert.deepEqual(report.sessions.map((x) => `${x.user_id}/${x.session_id}:${x.status}`).sort(), ['ann/old:archived', 'bob/bobs:archived']);

    // the old session: one archive and the pinned entry, nothing else, in every tier
    const old = await s.longTerm.recent('ann', { sessionId: 'old', limit: 100 });
    const archive = old.find((e) => e.kind === 'archive');
    assert.ok(archive, 'an archive entry');
    assert.equal(archive.id, archiveIdFor('ann', 'old'));
    assert.deepEqual(old.map((e) => e.id).sort(), [archive.id, pinnedId].sort());
    assert.equal(old.find((e) => e.id === pinnedId)?.pinned, true);
    assert.deepEqual([...archive.covers!].sort(), oldIds.filter((id) => id !== pinnedId).sort(), 'covers = the ids it replaced');
    assert.match(archive.content, /^Archived conversation, /);
    assert.match(archive.content, /Kyoto/);
    assert.equal(archive.created_at, (await s.turnLog.get('ann', pinnedId))!.created_at, 'dated at the session\'s last activity');
    assert.deepEqual((await s.turnLog.session('ann', 'old')).map((t) => t.id), [pinnedId], 'only the pinned turn stays in the turn log');
    assert.deepEqual((await s.shortTerm.recent('ann', 'old')).map((t) => t.id), [pinnedId], 'short-term holds only the pinned turn');
    const vectorIds = (s.db!.prepare("SELECT id FROM vectors WHERE user_id = 'ann' AND session_id = 'old' ORDER BY id").all() as Array<{ id: string }>).map((r) => r.id);
    assert.deepEqual(vectorIds, [archive.id, pinnedId].sort(), 'replaced vectors gone, the archive embedded, the pinned one kept');
    const kinds = s.db!.prepare("SELECT kind FROM vectors WHERE id = ?").get(archive.id) as { kind: string };
    assert.equal(kinds.kind, 'archive');

    // the 29-day session is untouched
    assert.deepEqual(await s.longTerm.recent('ann', { sessionId: 'recent', limit: 100 }), recentBefore.entries);
    assert.deepEqual((await s.turnLog.session('ann', 'recent')), recentBefore.turns);
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann', session_id: 'recent' }), recentBefore.vectors);

    // retrieval finds the archive
    const r = await memory.retrieve({ query: 'Kyoto trip budget', user_id: 'ann' });
    assert.ok(r.results.some((x) => x.id === archive.id && x.kind === 'archive'));

    // a second run changes nothing
    const before = snapshot(s);
    const again = await s.archiver.run();
    await memory.idle();
    assert.equal(again.archived, 0);
    assert.equal(again.sessions.length, 0);
    assert.deepEqual(snapshot(s), before);
    await memory.close();
  });

  it('dry run reports what it would do and changes nothing', async () => {
    const { memory, services: s } = await testMemory();
    await conversation(s, 'ann', 'old', 40, { pinned: 'Pinned fact about the blue door.' });
    await memory.idle();
    const before = snapshot(s);
    const r = await s.archiver.run({ dryRun: true });
    assert.equal(r.dry_run, true);
    assert.equal(r.sessions.length, 1);
    assert.equal(r.sessions[0]!.status, 'would_archive');
    assert.equal(r.sessions[0]!.pinned_kept, 1);
    assert.ok(r.sessions[0]!.replaced >= 5);
    assert.deepEqual(snapshot(s), before);
    // --inactive-days moves the cutoff
    assert.equal((await s.archiver.run({ dryRun: true, inactiveDays: 50 })).sessions.length, 0);
    await memory.close();
  });

  it('folds a session that became active again into its one archive', async () => {
    const { memory, services: s } = await testMemory();
    const first = await conversation(s, 'ann', 'trip', 60);
    await memory.idle();
    await s.archiver.run();
    const later = await s.writePath.addTurns([{ user_id: 'ann', session_id: 'trip', role: 'user', content: 'We booked the ryokan in Gion for March 3.', created_at: daysAgo(40) }]);
    await memory.idle();
    assert.equal((await s.archiver.run()).archived, 1);
    await memory.idle();
    const entries = await s.longTerm.recent('ann', { sessionId: 'trip', limit: 100 });
    assert.equal(entries.length, 1, 'still one archive for the session');
    const archive = entries[0]!;
    assert.equal(archive.kind, 'archive');
    assert.deepEqual([...archive.covers!].sort(), [...first, ...later.ids].sort());
    assert.match(archive.content, /ryokan|Gion/);
    assert.equal((archive.metadata?.archive as { turns: number }).turns, 6);
    assert.equal((await s.turnLog.session('ann', 'trip')).length, 0);
    assert.equal(await s.vectors.count(undefined, { user_id: 'ann', session_id: 'trip' }), 1);
    await memory.close();
  });

  it('leaves a session that changes while its summary is written for the next run', async () => {
    const { memory, services: s } = await testMemory();
    await conversation(s, 'ann', 'busy', 40);
    await memory.idle();
    const before = snapshot(s);
    const meddling: ArchiveSummarizer = {
      async summarize() {
        // an old turn arrives (an import) while the summary is being written
        await s.writePath.addTurns([{ user_id: 'ann', session_id: 'busy', role: 'user', content: 'A late arrival.', created_at: daysAgo(39) }]);
        return { text: 'summary', summarizer: 'test' };
      },
    };
    const archiver = new Archiver({ ...depsOf(s), summarizer: meddling });
    const r = await archiver.run();
    assert.equal(r.sessions[0]!.status, 'changed');
    assert.equal(r.archived, 0);
    await memory.idle();
    const after = snapshot(s);
    const ids = (rows: unknown[]) => new Set(rows.map((r) => (r as { id: string }).id));
    for (const id of ids(before.entries)) assert.ok(ids(after.entries).has(id), `entry ${id} kept`);
    for (const id of ids(before.turns)) assert.ok(ids(after.turns).has(id), `turn ${id} kept`);
    assert.ok(!(after.entries as Array<{ kind: string }>).some((e) => e.kind === 'archive'), 'no archive written');
    assert.equal(after.turns.length, before.turns.length + 1, 'the late turn is stored');
    await memory.close();
  });

  it('a failing summarizer leaves the session as it was and fails the run', async () => {
    const { memory, services: s } = await testMemory();
    await conversation(s, 'ann', 'x', 40);
    await memory.idle();
    const before = snapshot(s);
    const archiver = new Archiver({ ...depsOf(s), summarizer: { summarize: async () => Promise.reject(new Error('model down')) } });
    const r = await archiver.run();
    assert.equal(r.failed, 1);
    assert.match(r.sessions[0]!.error!, /model down/);
    assert.deepEqual(snapshot(s), before);
    assert.equal((await new SqliteArchiveStore(s.db!).lastRuns(1))[0]!.outcome, 'failed');
    await memory.close();
  });

  it('runs a scheduled occurrence once: a retry of a completed occurrence is recorded and skipped', async () => {
    const { memory, services: s } = await testMemory();
    await conversation(s, 'ann', 'x', 40);
    await memory.idle();
    const first = await s.archiver.run({ runId: 'repeat:archive:1700000000000', trigger: 'schedule' });
    assert.equal(first.archived, 1);
    const second = await s.archiver.run({ runId: 'repeat:archive:1700000000000', trigger: 'schedule' });
    assert.equal(second.duplicate, true);
    const runs = await new SqliteArchiveStore(s.db!).runsOf('repeat:archive:');
    assert.deepEqual(runs.map((r) => r.outcome), ['done', 'duplicate']);
    await memory.close();
  });

  it('retries vector deletes through the outbox when the vector backend fails', async () => {
    const { memory, services: s } = await testMemory();
    const ids = await conversation(s, 'ann', 'x', 40);
    await memory.idle();
    const failing = { ...s.vectors, backend: s.vectors.backend, delete: async () => Promise.reject(new Error('qdrant down')) } as typeof s.vectors;
    const r = await new Archiver({ ...depsOf(s), vectors: failing }).run();
    assert.equal(r.archived, 1);
    const store = new SqliteArchiveStore(s.db!);
    assert.equal(await store.vectorDeletesPending(), ids.length, 'queued in the outbox');
    // the next run (with the backend back) deletes them first
    await s.archiver.run();
    assert.equal(await store.vectorDeletesPending(), 0);
    await memory.idle();
    const left = s.db!.prepare("SELECT id FROM vectors WHERE user_id = 'ann'").all() as Array<{ id: string }>;
    assert.deepEqual(left.map((x) => x.id), [archiveIdFor('ann', 'x')]);
    await memory.close();
  });

  it("merges the text index last on a run over every user: not on a dry run, a run for one user, or when it fails", async () => {
    const { memory, services: s } = await testMemory();
    for (let d = 40; d < 44; d++) await conversation(s, 'ann', `old-${d}`, d);
    await conversation(s, 'bob', 'recent', 2);
    await memory.idle();
    const segments = () => s.db!.prepare('SELECT count(DISTINCT segid) FROM entries_fts_idx').pluck().get() as number;
    assert.ok(segments() > 1, 'each persist commit wrote a segment');

    assert.equal((await s.archiver.run({ dryRun: true })).text_index, null);
    assert.equal((await s.archiver.run({ userId: 'bob' })).text_index, null);
    assert.ok(segments() > 1);

    const warnings: unknown[] = [];
    const log = { ...silentLogger(), warn: (o: unknown) => void warnings.push(o) } as unknown as ReturnType<typeof silentLogger>;
    const broken = await new Archiver({ ...depsOf(s), log, textIndex: { mergeTextIndex: () => Promise.reject(new Error('disk full')) } }).run({ userId: 'nobody' });
    assert.equal(broken.text_index, null, 'a run for one user does not try');
    const failed = await new Archiver({ ...depsOf(s), log, textIndex: { mergeTextIndex: () => Promise.reject(new Error('disk full')) } }).run();
    assert.equal(failed.text_index, null);
    assert.equal(failed.archived, 4, 'the archival itself is done');
    assert.equal(warnings.length, 1);
    assert.equal((await new SqliteArchiveStore(s.db!).lastRuns(1))[0]!.outcome, 'done');

    await conversation(s, 'ann', 'old-50', 50);
    await memory.idle();
    const r = await s.archiver.run();
    assert.equal(r.archived, 1);
    assert.ok(r.text_index && r.text_index.parts_before > 1 && r.text_index.parts_after === 1, JSON.stringify(r.text_index));
    assert.equal(segments(), 1);
    const found = await memory.retrieve({ query: 'Kyoto budget peanuts', user_id: 'ann' });
    assert.ok(found.results.some((x) => x.kind === 'archive'), 'the merged index still finds the archives');
    await memory.close();
  });
});

function depsOf(s: Services) {
  return {
    store: new SqliteArchiveStore(s.db!),
    shortTerm: s.shortTerm,
    vectors: s.vectors,
    queue: s.queue,
    embedders: s.embedders,
    summarizer: { summarize: async () => ({ text: 'x', summarizer: 'x' }) } as ArchiveSummarizer,
    log: silentLogger(),
    inactiveDays: 30,
  };
}
