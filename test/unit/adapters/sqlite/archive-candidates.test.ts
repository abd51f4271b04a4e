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
import { mulberry32 } from '../../../fixtures/random.js';
import { planOf, recordRun } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * The daily archival run asks which sessions are old enough to archive. Asked in one statement over
 * both tables, the answer read both whole while the event loop waited (100k turns: 105 ms with nothing
 * to archive, 180–310 ms with 11k sessions). It is read a page of sessions at a time from each table's
 * index and merged; the answer must be the one statement's, sessions of ids that JS and SQLite order
 * differently included.
 */

/** the one statement of before: what the pages must answer */
const ONE_STATEMENT = `WITH activity AS (
    SELECT user_id, session_id, max(created_at) AS last_at FROM (
      SELECT user_id, session_id, created_at FROM turns UNION ALL SELECT user_id, session_id, created_at FROM entries
    ) GROUP BY user_id, session_id)
  SELECT a.user_id, a.session_id, a.last_at FROM activity a
  WHERE a.last_at < @cutoff AND (@user_id IS NULL OR a.user_id = @user_id) AND (
    EXISTS (SELECT 1 FROM turns t WHERE t.user_id = a.user_id AND t.session_id = a.session_id AND t.pinned = 0)
    OR EXISTS (SELECT 1 FROM entries e WHERE e.user_id = a.user_id AND e.session_id = a.session_id AND e.pinned = 0 AND e.kind IN ('turn', 'summary')))
  ORDER BY a.user_id, a.session_id`;

// U+FFFD sorts after an astral character in JS (UTF-16) and before it in SQLite (UTF-8)
const USERS = ['ann', 'bob', '\uFFFDx', '😀x', 'zed'];
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

describe('SQLite archive store: candidates read page by page', () => {
  it("answer what one statement over both tables answered, reading each table's index a page at a time", async () => {
    const db = openDatabase(join(tmpDir(), 'candidates.db'));
    // prepared before the runs are recorded: the oracle's own reads are not the store's
    const oracle = db.prepare(ONE_STATEMENT);
    const ran = recordRun(db);
    const log = new SqliteTurnLog(db);
    const longTerm = new SqliteLongTermStore(db, log.writes);
    const store = new SqliteArchiveStore(db);
    const rand = mulberry32(7);
    const turns: Turn[] = [];
    const entries: MemoryEntry[] = [];
    // 1,400 sessions over five users (pages of 500 end inside a user's sessions): some only in the turn
    // log, some only in the long-term store, some pinned throughout, some of a newer time in one table
    for (let i = 0; i < 1400; i++) {
      const user = USERS[i % USERS.length]!;
      const session = `s${Math.floor(rand() * 1e6)}-${i}${i % 11 === 0 ? '😀' : i % 13 === 0 ? '\uFFFD' : ''}`;
      const where = rand();
      const at = (d: number) => new Date(T0 + d * DAY).toISOString();
      const pinned = rand() < 0.1;
      const day = Math.floor(rand() * 60);
      const content = `session ${i} of ${user}`;
      if (where < 0.7) turns.push({ id: `t${i}`, user_id: user, session_id: session, role: 'user', name: null, content, content_hash: contentHash(content), created_at: at(day), importance: null, pinned, metadata: null });
      if (where > 0.4) {
        const kind = rand() < 0.2 ? 'archive' : rand() < 0.5 ? 'summary' : 'turn';
        entries.push({ id: `e${i}`, user_id: user, session_id: session, role: 'user', name: null, kind, content, content_hash: contentHash(`e ${content}`), importance: 0.5, pinned, metadata: null, covers: null, created_at: at(day + (rand() < 0.2 ? 40 : 0)), updated_at: at(day) });
      }
    }
    log.appendSync(turns);
    await longTerm.upsert(entries);

    ran.length = 0;
    for (const cutoff of [new Date(T0 + 30 * DAY).toISOString(), new Date(T0 + 365 * DAY).toISOString(), new Date(T0 - DAY).toISOString()]) {
      const expected = oracle.all({ cutoff, user_id: null });
      assert.deepEqual(await store.candidates(cutoff), expected, cutoff);
      for (const user of USERS) assert.deepEqual(await store.candidates(cutoff, user), oracle.all({ cutoff, user_id: user }), `${cutoff} ${user}`);
    }
    assert.ok((oracle.all({ cutoff: new Date(T0 + 365 * DAY).toISOString(), user_id: null }) as unknown[]).length > 1000, 'the sessions fill several pages');

    const statements = [...new Set(ran)];
    assert.ok(statements.length > 0);
    for (const sql of statements) {
      const plan = planOf(db, sql);
      assert.ok(!plan.some((d) => /^SCAN (turns|entries)\b/.test(d)), `a statement reads a whole table: ${sql}\n${JSON.stringify(plan)}`);
    }
    db.close();
  });
});
