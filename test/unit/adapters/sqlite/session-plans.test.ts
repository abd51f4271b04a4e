import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteVectorStore } from '../../../../src/adapters/embedded/rows.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteErasureStore } from '../../../../src/adapters/sqlite/erasure.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A statement that names one session must reach that session's rows through an index the session
 * narrows, not walk every row of its user. Written `(@session_id IS NULL OR session_id = @session_id)`,
 * one statement served a user and a session, and SQLite, which cannot narrow an index by a condition
 * inside an OR, walked the user's rows for a session: forgetting a session of 27 turns of a user of 100k
 * real turns took 625 ms to find its vectors (text and all read) and 376 ms to list its ids, and
 * compaction's read of a session's entries 184 ms. better-sqlite3 does not expose the rows a statement
 * visits, so each statement's plan says what it walks: every statement the SQLite stores prepare, up
 * front or for a session's read, whose WHERE compares `session_id` with a value.
 */
describe('SQLite statements of one session', () => {
  it("reach the session's rows through an index the session narrows", async () => {
    const db = openDatabase(join(tmpDir(), 'sessions.db'));
    const prepared = recordPrepared(db);
    const turnLog = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db);
    const erasure = new SqliteErasureStore(db);
    const vectors = new SqliteVectorStore(db);
    // the reads and deletes of a session, which prepare their statements when first used
    await longTerm.recent('u', { limit: 5, sessionId: 's1' });
    await longTerm.recent('u', { limit: 5, sessionId: 's1', createdBefore: '2026-01-01T00:00:00.000Z', where: { roles: ['user'] } });
    await longTerm.searchSubstring('u', 'ferry', { limit: 5, sessionId: 's1' });
    assert.deepEqual(await erasure.idsIn({ kind: 'session', userId: 'u', sessionId: 's1' }), new Set());
    assert.equal(await turnLog.deleteWhere('u', 's1'), 0);
    assert.deepEqual(await longTerm.deleteWhere('u', 's1'), []);
    assert.deepEqual((await vectors.deleteWhere({ user_id: 'u', session_id: 's1' }, 1000)).result, []);

    const ofSession = prepared.filter((sql) => /\bWHERE\b[\s\S]*\bsession_id = (\?|@session_id)/.test(sql) && /\b(FROM|UPDATE) (turns|entries|vectors)\b/.test(sql));
    for (const what of ['DELETE FROM turns', 'DELETE FROM entries', 'DELETE FROM vectors', 'SELECT id FROM turns']) {
      assert.ok(ofSession.some((sql) => sql.includes(what)), `${what}: a statement of one session was prepared`);
    }
    for (const sql of ofSession) {
      const plan = planOf(db, sql);
      const walks = plan.filter((d) => /^(SCAN|SEARCH) (turns|entries|vectors)\b/.test(d));
      assert.ok(walks.length > 0, `${sql}: ${JSON.stringify(plan)}`);
      // (the vectors' delete first finds the embedders held, one min() seek of its index each, then
      // deletes a bounded list of the session's rows, each by its rowid)
      const seeks = /^SEARCH vectors USING (COVERING INDEX vectors_filter( \(embedder>\?\))?|INTEGER PRIMARY KEY \(rowid=\?\))$/;
      for (const d of walks) if (!seeks.test(d)) assert.match(d, /session_id=\?/, `a walk the session does not narrow: ${sql}\n${JSON.stringify(plan)}`);
    }
    db.close();
  });

  // (a user's erasure still sweeps the vectors' change log whole: rare, and that log has no user index)
  it("an erasure of a session reads no table whole (entry_sizes' rows go with their entries)", async () => {
    const db = openDatabase(join(tmpDir(), 'erase.db'));
    const erasure = new SqliteErasureStore(db);
    const prepared = recordPrepared(db);
    await erasure.eraseRows({ kind: 'session', userId: 'u', sessionId: 's1' });
    const deletes = prepared.filter((sql) => sql.startsWith('DELETE FROM'));
    assert.ok(deletes.some((sql) => sql.startsWith('DELETE FROM entries')), "the entries' delete");
    for (const sql of deletes) {
      const plan = planOf(db, sql);
      assert.ok(!plan.some((d) => /^SCAN /.test(d)), `${sql}: ${JSON.stringify(plan)}`);
    }
    db.close();
  });
});
