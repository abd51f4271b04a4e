import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { entry } from '../../../contract/long-term.contract.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { countTurns } from '../../../helpers/loop-turns.js';

/**
 * A prune of many entries gives the event loop turns while it runs, as an erasure does
 * (src/adapters/sqlite/steps.ts: each entry leaves the text index under FTS5's secure-delete, and one
 * statement over a user's old entries held the process as long as all of them took). With `stepMs: 0`
 * each row is a transaction of its own, so the turns counted do not depend on the machine's speed. An
 * entry pinned while the prune runs is checked again as its row comes up, and stays.
 */
describe('SQLite long-term store: prune in steps', () => {
  it('deletes a row a transaction, the event loop turning between, and keeps what stopped matching', async () => {
    const db = openDatabase(join(tmpDir(), 'prune.db'));
    const store = new SqliteLongTermStore(db, undefined, { stepMs: 0 });
    const rows = 30;
    const low = Array.from({ length: rows }, (_, i) => entry('ann', `ann mentioned the ferry to Porto on day ${i}`, { importance: 0.1 }));
    const kept = entry('ann', 'ann said the harbour cafe is her favourite', { importance: 0.9 });
    await store.upsert([...low, kept, entry('bob', 'bob mentioned the ferry too', { importance: 0.1 })]);

    const counter = countTurns();
    // pinned after the prune listed its rows: the last of them is checked again and stays
    const last = low[rows - 1]!;
    setImmediate(() => void store.update('ann', last.id, { pinned: true }));
    const pruned = await store.prune({ userId: 'ann', belowImportance: 0.5 });
    const turns = counter.stop();

    assert.ok(turns >= rows - 1, `the event loop turned ${turns} times while ${rows} entries were pruned (one a transaction)`);
    assert.deepEqual(pruned.map((r) => r.id).sort(), low.slice(0, rows - 1).map((e) => e.id).sort());
    assert.equal(await store.count('ann'), 2, 'the entry above the bound and the one pinned meanwhile stay');
    assert.ok(await store.get('ann', last.id));
    assert.equal(await store.count('bob'), 1, "another user's entry stays");
    assert.deepEqual(await store.searchText('ann', 'ferry Porto', { limit: 50 }).then((h) => h.map((x) => x.entry.id)), [last.id]);
  });
});
