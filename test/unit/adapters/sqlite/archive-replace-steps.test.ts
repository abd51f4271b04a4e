import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteArchiveStore } from '../../../../src/adapters/sqlite/archive-store.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import type { Turn } from '../../../../src/domain/turn.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { countTurns } from '../../../helpers/loop-turns.js';

const DAY = 86_400_000;
const at = (i: number) => new Date(Date.now() - 40 * DAY + i * 60_000).toISOString();

function turn(user: string, i: number): Turn {
  const content = `${user} talked about the ferry to Porto, part ${i}`;
  return { id: `s-t${i}`, user_id: user, session_id: 's', role: i % 2 ? 'assistant' : 'user', name: null, content, content_hash: contentHash(content), created_at: at(i), importance: 0.5, pinned: false, metadata: null };
}

/**
 * Replacing a session by its archive gives the event loop turns while its entries go (each leaves the
 * text index under FTS5's secure-delete: a session of thousands of turns held the process for seconds
 * in one transaction). With `stepMs: 0` each entry is a transaction of its own, so the turns counted
 * do not depend on the machine's speed. The archive and the turn log's rows go first; an entry edited
 * or pinned while the steps run is checked as its row comes up, and stays.
 */
describe('SQLite archive store: a session replaced in steps', () => {
  it('writes the archive first, then deletes an entry a transaction, keeping what changed meanwhile', async () => {
    const db = openDatabase(join(tmpDir(), 'archive-steps.db'));
    const turnLog = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db, turnLog.writes);
    const store = new SqliteArchiveStore(db, { stepMs: 0 });
    const rows = 30;
    const turns = Array.from({ length: rows }, (_, i) => turn('ann', i));
    const bobs = [turn('bob', 0)];
    await turnLog.append([...turns, ...bobs]);
    await longTerm.upsert([...turns, ...bobs].map((t): MemoryEntry => ({ ...t, kind: 'turn', importance: 0.5, covers: null, updated_at: t.created_at })));

    const [ref] = await store.candidates(new Date(Date.now() - 30 * DAY).toISOString(), 'ann');
    const contents = await store.contents(ref!, 'archive~s');
    const text = 'Archived conversation: the ferry to Porto';
    const archive: MemoryEntry = {
      id: 'archive~s', user_id: 'ann', session_id: 's', role: 'system', name: null, kind: 'archive', content: text, content_hash: contentHash(text),
      importance: 0.5, pinned: false, metadata: null, covers: turns.map((t) => t.id), created_at: at(rows), updated_at: new Date().toISOString(),
    };

    // transactions begun from here: the replacement's first, then one a step (on a loaded machine a
    // second step's timer can fire before the loop's first check phase)
    let begun = 0;
    const transaction = db.transaction.bind(db);
    (db as { transaction: typeof db.transaction }).transaction = ((fn: () => unknown) => (begun++, transaction(fn))) as typeof db.transaction;
    const seen: Array<{ archive: boolean; turnLog: number; entries: number; steps: number }> = [];
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const counter = countTurns((turns) => {
      if (turns === 1) seen.push({ archive: count("SELECT count(*) AS n FROM entries WHERE id = 'archive~s'") === 1, turnLog: count("SELECT count(*) AS n FROM turns WHERE user_id = 'ann'"), entries: count("SELECT count(*) AS n FROM entries WHERE user_id = 'ann' AND kind = 'turn'"), steps: begun - 1 });
    });
    // the steps delete the newest entries first: the oldest two are edited and pinned after the first step
    setImmediate(() => void longTerm.update('ann', 's-t0', { content: 'ann edited this after the session was read' }));
    setImmediate(() => void longTerm.update('ann', 's-t1', { pinned: true }));
    const result = await store.replace(contents, archive, new Date(Date.now() - 30 * DAY).toISOString());
    const ticks = counter.stop();

    assert.ok(result, 'the session was as read when the replacement began');
    assert.ok(ticks >= rows - 2, `the event loop turned ${ticks} times while ${rows} entries went (one a transaction)`);
    const steps = seen[0]!.steps;
    assert.ok(steps >= 1, 'a step ran before the first turn of the loop');
    assert.deepEqual(seen[0], { archive: true, turnLog: 0, entries: rows - steps, steps }, 'after the first steps: the archive written, the turn log emptied, an entry gone a step');
    assert.deepEqual((await longTerm.recent('ann', { sessionId: 's', limit: 100 })).map((e) => e.id).sort(), ['archive~s', 's-t0', 's-t1']);
    assert.equal((await longTerm.get('ann', 's-t0'))!.content, 'ann edited this after the session was read');
    assert.equal(await longTerm.count('bob'), 1, "another user's entry stays");
    const queued = (await store.pendingVectorDeletes(1000)).filter((v) => v.user_id === 'ann');
    assert.deepEqual(queued.filter((v) => v.live).map((v) => v.id).sort(), ['s-t0', 's-t1'], 'their vectors are kept: their entries live');
    assert.equal(queued.filter((v) => !v.live).length, rows - 2);
    assert.deepEqual(await longTerm.searchText('ann', 'ferry Porto', { limit: 50 }).then((h) => h.map((x) => x.entry.id).sort()), ['archive~s', 's-t1']);
  });
});
