import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { GROUP_PAGE, SqliteMaintenanceStore, USER_ROWS_PAGE } from '../../../../src/adapters/sqlite/maintenance.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { turn } from '../../../contract/durable-records.js';
import { entry } from '../../../contract/long-term.contract.js';
import { countTurns } from '../../../helpers/loop-turns.js';
import { tmpDir } from '../../../helpers/tmp.js';

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1) + minute * 60_000).toISOString();

/**
 * The inspector's counts (GET /inspect/users, /inspect/sessions) read a page of GROUP_PAGE users or
 * sessions at a time, giving the event loop turns between pages (with `stepMs: 0`, after every page,
 * so the turns counted do not depend on the machine's speed): one statement over every row held it
 * as long as they all took. The listing is the one a single statement gave: the most recently active
 * first, every count whole across the pages' bounds, whether a group is in the turn log, the
 * long-term store or both. A user holding more rows than one statement reads (USER_ROWS_PAGE) is
 * counted a page of its sessions at a time: one page of users holding one of 100k turns held the event
 * loop ~100 ms.
 */
describe('SQLite inspector: counts a page of groups at a time', () => {
  it('lists users and a user\'s sessions across pages, the event loop turning between them', async () => {
    const db = openDatabase(join(tmpDir(), 'inspector.db'));
    const log = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db);
    const maintenance = new SqliteMaintenanceStore(db, 'inspector.db', 0);
    const groups = GROUP_PAGE * 2 + 50;
    // users u000…: each a turn at its own minute; every third also an entry, a minute later, in another session
    const users = Array.from({ length: groups }, (_, i) => `u${String(i).padStart(3, '0')}`);
    await log.append(users.map((u, i) => turn(u, `hello from ${u}`, { session_id: 'first', created_at: at(i) })));
    await longTerm.upsert(users.filter((_, i) => i % 3 === 0).map((u) => entry(u, `an entry of ${u}`, { session_id: 'second', created_at: at(users.indexOf(u) + 1), updated_at: at(users.indexOf(u) + 1) })));
    // one user's sessions: s000…, each a turn; every fifth session also holds an entry, newer
    const sessions = Array.from({ length: groups }, (_, i) => `s${String(i).padStart(3, '0')}`);
    await log.append(sessions.map((s, i) => turn('big', `turn in ${s}`, { session_id: s, created_at: at(10_000 - i) })));
    await longTerm.upsert(sessions.filter((_, i) => i % 5 === 0).map((s) => entry('big', `entry in ${s}`, { session_id: s, created_at: at(20_000), updated_at: at(20_000) })));

    const counter = countTurns();
    const listed = await maintenance.users({ all: true }, 1000);
    const turnsForUsers = counter.stop();
    assert.ok(turnsForUsers >= 2, `the event loop turned ${turnsForUsers} times while ${groups + 1} users were counted in pages of ${GROUP_PAGE}`);
    assert.equal(listed.length, groups + 1);
    assert.deepEqual(listed[0], { user_id: 'big', sessions: groups, turns: groups, entries: sessions.length / 5, last_at: at(20_000) });
    // the rest newest first: an entry's minute counts, and ties go by id
    const rest = listed.slice(1);
    assert.deepEqual(rest.map((u) => u.user_id), [...users].sort((a, b) => {
      const last = (u: string) => users.indexOf(u) + (users.indexOf(u) % 3 === 0 ? 1 : 0);
      return last(b) - last(a) || (a < b ? -1 : 1);
    }));
    const u3 = listed.find((u) => u.user_id === 'u003')!;
    assert.deepEqual(u3, { user_id: 'u003', sessions: 2, turns: 1, entries: 1, last_at: at(4) });
    assert.deepEqual((await maintenance.users({ all: true }, 2)).map((u) => u.user_id), ['big', users[groups - 1]]);
    // a scoped listing, in pages too
    const scoped = await maintenance.users({ all: false, users: [...users.slice(0, GROUP_PAGE + 10), 'nobody'] }, 1000);
    assert.equal(scoped.length, GROUP_PAGE + 10);

    const counting = countTurns();
    const listedSessions = await maintenance.sessions('big', 1000);
    const turnsForSessions = counting.stop();
    assert.ok(turnsForSessions >= 2, `the event loop turned ${turnsForSessions} times while ${groups} sessions were counted`);
    assert.equal(listedSessions.length, groups);
    // the sessions with an entry first (its minute is the newest), each by id; then the rest by their turn's minute
    const withEntry = sessions.filter((_, i) => i % 5 === 0);
    assert.deepEqual(listedSessions.slice(0, withEntry.length).map((s) => s.session_id), withEntry);
    assert.deepEqual(listedSessions[0], { session_id: 's000', turns: 1, entries: 1, first_at: at(10_000), last_at: at(20_000) });
    assert.deepEqual(listedSessions.slice(withEntry.length).map((s) => s.session_id), sessions.filter((_, i) => i % 5 !== 0));
  });

  it('counts a user holding more rows than a statement reads a page of its sessions at a time', async () => {
    const db = openDatabase(join(tmpDir(), 'inspector-big.db'));
    const log = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db);
    const maintenance = new SqliteMaintenanceStore(db, 'inspector-big.db', 0);
    // more turns than one statement reads, over more sessions than a page holds; an entry in a session of its own
    const sessions = GROUP_PAGE + 20;
    await log.append(Array.from({ length: USER_ROWS_PAGE }, (_, i) => turn('big', `turn ${i}`, { session_id: `s${i % sessions}`, created_at: at(i) })));
    await longTerm.upsert([entry('big', 'a summary', { session_id: 'summaries', created_at: at(USER_ROWS_PAGE), updated_at: at(USER_ROWS_PAGE) })]);
    await log.append([turn('small', 'hello', { session_id: 'only', created_at: at(1) })]);

    const counter = countTurns();
    const listed = await maintenance.users({ all: true }, 10);
    const turns = counter.stop();
    assert.ok(turns >= 2, `the event loop turned ${turns} times while a user of ${USER_ROWS_PAGE + 1} rows in ${sessions + 1} sessions was counted`);
    assert.deepEqual(listed, [
      { user_id: 'big', sessions: sessions + 1, turns: USER_ROWS_PAGE, entries: 1, last_at: at(USER_ROWS_PAGE) },
      { user_id: 'small', sessions: 1, turns: 1, entries: 0, last_at: at(1) },
    ]);
  });
});
