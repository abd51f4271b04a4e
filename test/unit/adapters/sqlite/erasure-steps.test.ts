import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteErasureStore } from '../../../../src/adapters/sqlite/erasure.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { turn } from '../../../contract/durable-records.js';
import { entry } from '../../../contract/long-term.contract.js';
import { tmpDir } from '../../../helpers/tmp.js';
import { countTurns } from '../../../helpers/loop-turns.js';

/**
 * An erasure of many rows gives the event loop turns while it runs. Each entry it deletes leaves the
 * text index under FTS5's secure-delete, ~0.5 ms for a reply of 500 characters: deleted in one
 * transaction, forgetting a user of 1,400 such replies held every request of the process 0.8 s. With
 * `stepMs: 0` each statement is a transaction of its own, so the turns counted do not depend on the
 * machine's speed. Also checked: the turn log's rows go first (nothing can persist a turn again once
 * it is gone from the log), a write of another user between steps stays, and the counts add up.
 */
describe('SQLite erasure in steps', () => {
  it('deletes a user a few rows a transaction, the turn log first, the event loop turning between', async () => {
    const db = openDatabase(join(tmpDir(), 'steps.db'));
    const turnLog = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db);
    const erasure = new SqliteErasureStore(db, { stepMs: 0 });
    const rows = 40;
    for (const user of ['ann', 'bob']) {
      const turns = Array.from({ length: rows }, (_, i) => turn(user, `${user} told the ferry schedule to Porto, day ${i}, with the harbour cafe and the late bus`, { session_id: `s${i % 4}` }));
      await turnLog.append(turns);
      await longTerm.upsert(turns.map((t) => entry(user, t.content, { id: t.id, session_id: t.session_id })));
    }

    let atFirstTurn: { logged: number; entries: number } | null = null;
    const written = turn('bob', 'bob wrote this while ann was being erased', { session_id: 'late' });
    const counter = countTurns();
    // a turn soon after the erasure's first step (the turn log's rows): what is left, and a write
    setImmediate(async () => {
      // read at once, in this turn: an await between could let the next step run
      const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table} WHERE user_id = 'ann'`).pluck().get() as number;
      atFirstTurn = { logged: count('turns'), entries: count('entries') };
      await turnLog.append([written]);
      await longTerm.upsert([entry('bob', written.content, { id: written.id, session_id: 'late' })]);
    });
    const erased = await erasure.eraseRows({ kind: 'user', userId: 'ann' });
    const turns = counter.stop();

    assert.ok(turns >= rows, `the event loop turned ${turns} times while ${rows} entries were erased (one statement each)`);
    const first = atFirstTurn as { logged: number; entries: number } | null;
    assert.equal(first?.logged, 0, "at the first turn the user's turn log is gone");
    assert.ok((first?.entries ?? 0) > rows / 2, `while entries are still there (${first?.entries} of ${rows}): the turn log goes first`);
    assert.deepEqual(erased.long_term, { turn: rows, summary: 0, archive: 0 });
    assert.equal(erased.turn_log, rows);
    assert.equal(await longTerm.count('ann'), 0);
    assert.deepEqual(await longTerm.searchText('ann', 'ferry schedule Porto', { limit: 10 }), []);
    assert.equal((await erasure.idsIn({ kind: 'user', userId: 'ann' })).size, 0);
    assert.equal(await longTerm.count('bob'), rows + 1, "another user's entries, the one written meanwhile included, stay");
    assert.deepEqual(await turnLog.get('bob', written.id), written);
    assert.equal((await longTerm.searchText('bob', 'ferry schedule Porto', { limit: 100 })).length, rows);
  });
});

/**
 * A checkpoint meeting another one is refused at once, not waited for (SQLite's checkpoint lock takes
 * no busy handler): another process's connection checkpointing its commits holds it a few
 * milliseconds at a time, and an erasure's scrub that met it reported the log left for later.
 */
describe('SQLite erasure scrub', () => {
  it('asks again, a moment later, when its checkpoint meets another one', async () => {
    const db = openDatabase(join(tmpDir(), 'scrub-busy.db'));
    const erasure = new SqliteErasureStore(db);
    const pragma = db.pragma.bind(db);
    let refusals = 2;
    let asked = 0;
    db.pragma = ((source: string, options?: { simple?: boolean }) => {
      if (!source.startsWith('wal_checkpoint')) return pragma(source, options);
      asked++;
      return refusals-- > 0 ? [{ busy: 1, log: 4, checkpointed: 0 }] : pragma(source, options);
    }) as typeof db.pragma;
    assert.deepEqual(await erasure.scrub(), { complete: true });
    assert.equal(asked, 3);
    db.close();
  });
});
