import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { turn } from '../../../contract/durable-records.js';
import { entry } from '../../../contract/long-term.contract.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { countTurns } from '../../../helpers/loop-turns.js';

/**
 * A prune's turns leave the turn log in steps, as its entries leave the long-term store
 * (src/adapters/sqlite/steps.ts): one statement over a user's 1,400 real turns held every request of
 * the process ~40 ms. With `stepMs: 0` each row is a transaction of its own, so the turns counted do
 * not depend on the machine's speed. A turn whose entry is pinned while the prune runs is checked
 * again as its row comes up, and stays.
 */
describe('SQLite turn log: prune in steps', () => {
  it('deletes a row a transaction, the event loop turning between, and keeps a turn pinned meanwhile', async () => {
    const db = openDatabase(join(tmpDir(), 'prune-log.db'));
    const log = new SqliteTurnLog(db, undefined, { stepMs: 0 });
    const longTerm = new SqliteLongTermStore(db);
    const rows = 30;
    const turns = Array.from({ length: rows }, (_, i) => turn('ann', `ann mentioned the ferry to Porto on day ${i}`));
    const other = turn('bob', 'bob mentioned the ferry too');
    await log.append([...turns, other]);
    await longTerm.upsert(turns.map((t) => entry('ann', t.content, { id: t.id, session_id: t.session_id })));

    const counter = countTurns();
    // pinned after the prune listed its rows: the last of them is checked again and stays
    const last = turns[rows - 1]!;
    setImmediate(() => void longTerm.update('ann', last.id, { pinned: true }));
    const pruned = await log.prune({ userId: 'ann', olderThanDays: 1 });
    const loopTurns = counter.stop();

    assert.ok(loopTurns >= rows - 1, `the event loop turned ${loopTurns} times while ${rows} turns were pruned (one a transaction)`);
    assert.deepEqual(pruned.map((r) => r.id).sort(), turns.slice(0, rows - 1).map((t) => t.id).sort());
    assert.deepEqual(await log.get('ann', last.id), last, 'the turn whose entry was pinned meanwhile stays');
    assert.equal(await log.get('ann', turns[0]!.id), null);
    assert.deepEqual(await log.get('bob', other.id), other, "another user's turn stays");
  });
});
