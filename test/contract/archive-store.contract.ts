import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../src/domain/entry.js';
import { contentHash } from '../../src/domain/hash.js';
import type { Turn } from '../../src/domain/turn.js';
import type { ArchiveStore } from '../../src/ports/archive-store.js';
import type { LongTermStore } from '../../src/ports/long-term.js';
import type { TurnLog } from '../../src/ports/turn-log.js';

export interface ArchiveFixture {
  store: ArchiveStore;
  turnLog: TurnLog;
  longTerm: LongTermStore;
}

const DAY = 86_400_000;
const daysAgo = (d: number, plusMinutes = 0) => new Date(Date.now() - d * DAY + plusMinutes * 60_000).toISOString();

function turn(user: string, session: string, id: string, at: string, pinned = false): Turn {
  const content = `turn ${id} of ${session}`;
  return { id, user_id: user, session_id: session, role: 'user', name: null, content, content_hash: contentHash(content), created_at: at, importance: 0.5, pinned, metadata: null };
}

function entryOf(t: Turn, patch: Partial<MemoryEntry> = {}): MemoryEntry {
  return { ...t, kind: 'turn', importance: 0.5, covers: null, updated_at: t.created_at, ...patch } as MemoryEntry;
}

function archiveEntry(user: string, session: string, id: string, covers: string[], at: string): MemoryEntry {
  const content = `Archived conversation, ${covers.length} turns`;
  return {
    id, user_id: user, session_id: session, role: 'system', name: null, kind: 'archive', content, content_hash: contentHash(content),
    importance: 0.6, pinned: false, metadata: { archive: { turns: covers.length } }, covers, created_at: at, updated_at: new Date().toISOString(),
  };
}

/**
 * The contract every ArchiveStore passes (see its doc comment), over the turn log and long-term store
 * of the same backend. Tests use unique user ids, so one database serves them all.
 */
export function archiveStoreContract(name: string, make: () => Promise<ArchiveFixture>): void {
  describe(`ArchiveStore contract: ${name}`, () => {
    const uid = () => `u-${Math.random().toString(36).slice(2)}`;

    /** a session of three turns `ageDays` old, each also a long-term entry, the last one pinned when asked */
    async function session(f: ArchiveFixture, user: string, sid: string, ageDays: number, pinLast = false): Promise<Turn[]> {
      const turns = [0, 1, 2].map((i) => turn(user, sid, `${sid}-t${i}`, daysAgo(ageDays, i), pinLast && i === 2));
      await f.turnLog.append(turns);
      await f.longTerm.upsert(turns.map((t) => entryOf(t)));
      return turns;
    }

    it('lists the inactive sessions holding something to archive, per user or all, in order', async () => {
      const f = await make();
      const [ann, bob] = [uid(), uid()];
      await session(f, ann, 'old', 40);
      await session(f, ann, 'recent', 5);
      await session(f, bob, 'old', 50);
      const onlyPinned = turn(ann, 'pinned-only', 'p-0', daysAgo(60), true);
      await f.turnLog.append([onlyPinned]);
      const cutoff = daysAgo(30);
      const mine = await f.store.candidates(cutoff, ann);
      assert.deepEqual(mine.map((c) => c.session_id), ['old']);
      assert.equal(mine[0]!.user_id, ann);
      assert.equal(mine[0]!.last_at, daysAgo(40, 2).slice(0, 16) + mine[0]!.last_at.slice(16), 'the last turn\'s time');
      const all = (await f.store.candidates(cutoff)).filter((c) => c.user_id === ann || c.user_id === bob);
      assert.deepEqual(all.map((c) => `${c.user_id === ann ? 'ann' : 'bob'}/${c.session_id}`).sort(), ['ann/old', 'bob/old']);
    });

    it('replaces a session: unpinned turns and entries go, pinned stay, the archive is written, vectors queued', async () => {
      const f = await make();
      const user = uid();
      const turns = await session(f, user, 's', 40, true);
      const [ref] = await f.store.candidates(daysAgo(30), user);
      const contents = await f.store.contents(ref!, 'archive~s');
      assert.deepEqual(contents.turns.map((t) => t.id), ['s-t0', 's-t1']);
      assert.deepEqual(contents.entries.map((e) => e.id), ['s-t0', 's-t1']);
      assert.deepEqual(contents.pinned, ['s-t2']);
      assert.equal(contents.previous, null);
      assert.equal((await f.store.contents(ref!, 'archive~s')).fingerprint, contents.fingerprint, 'the same contents, the same fingerprint');

      const archive = archiveEntry(user, 's', 'archive~s', ['s-t0', 's-t1'], turns[2]!.created_at);
      const done = await f.store.replace(contents, archive, daysAgo(30));
      assert.ok(done);
      assert.deepEqual(done.removed.sort(), ['s-t0', 's-t1']);
      assert.deepEqual((await f.turnLog.session(user, 's')).map((t) => t.id), ['s-t2']);
      const left = await f.longTerm.recent(user, { sessionId: 's', limit: 10 });
      assert.deepEqual(left.map((e) => e.id).sort(), ['archive~s', 's-t2']);
      assert.deepEqual(await f.longTerm.get(user, 'archive~s'), archive);
      const queued = (await f.store.pendingVectorDeletes(10_000)).filter((v) => v.user_id === user);
      assert.deepEqual(queued.map((v) => [v.id, v.live]).sort(), [['s-t0', false], ['s-t1', false]]);
      await f.store.vectorDeletesDone(queued);
      assert.deepEqual((await f.store.pendingVectorDeletes(10_000)).filter((v) => v.user_id === user), []);
      assert.deepEqual(await f.store.candidates(daysAgo(30), user), [], 'nothing left to archive');
    });

    it('a session that changed since it was read is not replaced, and nothing changes', async () => {
      const f = await make();
      const user = uid();
      await session(f, user, 's', 40);
      const [ref] = await f.store.candidates(daysAgo(30), user);
      const read = await f.store.contents(ref!, 'archive~s');
      const archive = archiveEntry(user, 's', 'archive~s', ['s-t0', 's-t1', 's-t2'], read.ref.last_at);
      // an old turn arrives (an import) after the read
      await f.turnLog.append([turn(user, 's', 's-late', daysAgo(39))]);
      assert.equal(await f.store.replace(read, archive, daysAgo(30)), null);
      // an entry is edited after the read
      const again = await f.store.contents(ref!, 'archive~s');
      await f.longTerm.update(user, 's-t1', { content: 'edited' });
      assert.equal(await f.store.replace(again, archive, daysAgo(30)), null);
      assert.equal((await f.turnLog.session(user, 's')).length, 4);
      assert.equal(await f.longTerm.get(user, 'archive~s'), null);
      // no longer older than the cutoff
      const now = await f.store.contents(ref!, 'archive~s');
      assert.equal(await f.store.replace(now, archive, daysAgo(45)), null);
      assert.equal((await f.turnLog.session(user, 's')).length, 4);
    });

    it('two archivers replacing one session at once: exactly one wins', async () => {
      const [f, g] = [await make(), await make()];
      const user = uid();
      await session(f, user, 's', 40);
      const [ref] = await f.store.candidates(daysAgo(30), user);
      const [cf, cg] = await Promise.all([f.store.contents(ref!, 'archive~s'), g.store.contents(ref!, 'archive~s')]);
      const archive = archiveEntry(user, 's', 'archive~s', ['s-t0', 's-t1', 's-t2'], cf.ref.last_at);
      const results = await Promise.all([f.store.replace(cf, archive, daysAgo(30)), g.store.replace(cg, archive, daysAgo(30))]);
      assert.equal(results.filter((r) => r !== null).length, 1, 'one replacement');
      assert.equal((await f.longTerm.recent(user, { sessionId: 's', limit: 10 })).length, 1);
    });

    it('a session active again is folded into its one archive, which replaces the earlier one', async () => {
      const f = await make();
      const user = uid();
      const first = await session(f, user, 's', 60);
      const [ref] = await f.store.candidates(daysAgo(30), user);
      const c1 = await f.store.contents(ref!, 'archive~s');
      assert.ok(await f.store.replace(c1, archiveEntry(user, 's', 'archive~s', first.map((t) => t.id), c1.ref.last_at), daysAgo(30)));
      const late = turn(user, 's', 's-late', daysAgo(40));
      await f.turnLog.append([late]);
      await f.longTerm.upsert([entryOf(late)]);
      const [ref2] = await f.store.candidates(daysAgo(30), user);
      const c2 = await f.store.contents(ref2!, 'archive~s');
      assert.equal(c2.previous?.id, 'archive~s');
      assert.deepEqual(c2.turns.map((t) => t.id), ['s-late']);
      const second = archiveEntry(user, 's', 'archive~s', [...first.map((t) => t.id), 's-late'], c2.ref.last_at);
      const done = await f.store.replace(c2, second, daysAgo(30));
      assert.deepEqual(done?.removed, ['s-late'], 'the earlier archive is replaced, not removed');
      const entries = await f.longTerm.recent(user, { sessionId: 's', limit: 10 });
      assert.deepEqual(entries.map((e) => e.id), ['archive~s']);
      assert.deepEqual(entries[0]!.covers, second.covers);
      const archives: MemoryEntry[] = [];
      for await (const page of f.store.archives(1)) archives.push(...page.filter((e) => e.user_id === user));
      assert.deepEqual(archives.map((e) => e.id), ['archive~s']);
    });

    it('records runs; a scheduled occurrence that completed is a duplicate, also when two start it at once', async () => {
      const [f, g] = [await make(), await make()];
      const prefix = `run_%-${Math.random().toString(36).slice(2)}`;
      const run = { run_id: `${prefix}:1`, trigger: 'schedule' as const, dry_run: false, cutoff: daysAgo(30) };
      const first = await f.store.startRun(run);
      assert.equal(first.duplicate, false);
      await f.store.finishRun(first.seq, { outcome: 'done', sessions: 2, replaced: 7 });
      const both = await Promise.all([f.store.startRun(run), g.store.startRun(run)]);
      assert.deepEqual(both.map((b) => b.duplicate), [true, true]);
      const manual = await f.store.startRun({ ...run, trigger: 'manual' });
      assert.equal(manual.duplicate, false, 'a run by hand is never a duplicate');
      await f.store.finishRun(manual.seq, { outcome: 'failed', sessions: 0, replaced: 0, error: 'summarizer down' });
      const runs = await f.store.runsOf(prefix);
      assert.deepEqual(runs.map((r) => r.outcome), ['done', 'duplicate', 'duplicate', 'failed']);
      assert.deepEqual(await f.store.runsOf('run_x'), [], '% and _ in a prefix match themselves');
      const [last] = await f.store.lastRuns(1);
      assert.equal(last!.seq, manual.seq);
      assert.equal(last!.error, 'summarizer down');
      assert.equal(last!.dry_run, false);
      assert.equal(runs[0]!.sessions, 2);
      assert.equal(runs[0]!.replaced, 7);
      assert.equal(runs[0]!.pid, process.pid);
      assert.ok(runs[0]!.finished_at && runs[0]!.finished_at >= runs[0]!.started_at);
    });
  });
}
