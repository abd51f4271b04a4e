import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteMaintenanceStore } from '../../../../src/adapters/sqlite/maintenance.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { contentHash } from '../../../../src/domain/hash.js';
import type { Turn } from '../../../../src/domain/turn.js';
import type { PendingJob } from '../../../../src/ports/turn-log.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * The reconciler pages through the turns whose jobs are open every 30 s, and `doctor` lists them. Each
 * page was planned as a walk of the whole table by rowid, reading every turn's text until the page
 * filled: with nothing open, the whole log (100k real turns: ~60 ms of event loop per statement, each
 * pass). They are read from the partial indexes of open jobs, which hold only those turns; the plan
 * says what a statement reads.
 */

const T0 = Date.UTC(2026, 0, 1);

function turnsOf(user: string, from: number, n: number): Turn[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const content = `turn ${i} of ${user}, ${'with some text '.repeat(10)}`;
    return { id: `t${i}`, user_id: user, session_id: 's', role: 'user', name: null, content, content_hash: contentHash(content), created_at: new Date(T0 + i * 1000).toISOString(), importance: null, pinned: false, metadata: null };
  });
}

async function pages(log: SqliteTurnLog, job: PendingJob, before: number, batch: number): Promise<string[][]> {
  const out: string[][] = [];
  for await (const page of log.pending(job, before, batch)) out.push(page.map((t) => `${t.user_id}/${t.id}`));
  return out;
}

/** the reads of the turns table in `sql`'s plan that are neither an open job's index nor a lookup of one rowid */
function readsOfTheTable(db: Db, sql: string): string[] {
  return planOf(db, sql).filter((d) => /^(SCAN|SEARCH) turns\b/.test(d) && !/USING (COVERING )?INDEX turns_pending_(embed|persist)\b|USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(d));
}

describe('SQLite turn log: turns whose jobs are open', () => {
  it('are paged in acceptance order from the open jobs alone, and listed alike for doctor', async () => {
    const db = openDatabase(join(tmpDir(), 'pending.db'));
    const prepared = recordPrepared(db);
    const log = new SqliteTurnLog(db);
    const maintenance = new SqliteMaintenanceStore(db, 'pending.db');
    // accepted in this order: a's first 10, b's 10, a's last 10; b's last 10 later, after the cut
    const [a1, b1, a2, b2] = [turnsOf('a', 0, 10), turnsOf('b', 0, 10), turnsOf('a', 10, 10), turnsOf('b', 10, 10)];
    log.appendSync(a1, T0 + 1);
    log.appendSync(b1, T0 + 2);
    log.appendSync(a2, T0 + 2);
    log.appendSync(b2, T0 + 10);
    const cut = T0 + 5;
    const accepted = [...a1, ...b1, ...a2, ...b2].map((t) => `${t.user_id}/${t.id}`);
    const embedOpen = new Set(accepted.filter((_, i) => i % 3 !== 0));
    const persistOpen = new Set(accepted.filter((_, i) => i % 4 === 1 || i % 4 === 2));
    for (const key of accepted) {
      const [user, id] = key.split('/') as [string, string];
      if (!embedOpen.has(key)) log.markEmbeddedSync(user, [id], 'hash');
      if (!persistOpen.has(key)) log.markPersistedSync(user, id, 0.5);
    }
    const beforeCut = accepted.slice(0, 30);
    const expected: Record<PendingJob, string[]> = {
      embed: beforeCut.filter((k) => embedOpen.has(k)),
      persist: beforeCut.filter((k) => persistOpen.has(k)),
      any: beforeCut.filter((k) => embedOpen.has(k) || persistOpen.has(k)),
    };
    for (const job of ['embed', 'persist', 'any'] as const) {
      const got = await pages(log, job, cut, 4);
      assert.deepEqual(got.flat(), expected[job], job);
      assert.ok(got.every((p, i) => p.length === 4 || i === got.length - 1), `${job}: full pages but the last`);
    }
    // the cut is inclusive: a turn accepted at it is pending
    assert.equal((await pages(log, 'any', T0 + 10, 100)).flat().length, accepted.filter((k) => embedOpen.has(k) || persistOpen.has(k)).length);
    assert.deepEqual((await maintenance.unfinished(cut)).map((f) => `${f.user_id}/${f.id}`), expected.any);
    // doctor's cut is strict: accepted at it is not listed
    assert.deepEqual((await maintenance.unfinished(T0 + 2)).map((f) => `${f.user_id}/${f.id}`), expected.any.filter((k) => a1.some((t) => `a/${t.id}` === k)));

    const statements = [...new Set(prepared.filter((s) => /\b(embedded_with|persisted_at) IS NULL\b/.test(s) && !/\bAS pending_embed\b/.test(s)))];
    // a page of each job and doctor's list
    assert.equal(statements.length, 4, JSON.stringify(statements));
    for (const sql of statements) assert.deepEqual(readsOfTheTable(db, sql), [], `a read of the turns beyond the open ones: ${JSON.stringify(planOf(db, sql))}`);
    db.close();
  });

  it('are none once every job has completed', async () => {
    const db = openDatabase(join(tmpDir(), 'none-open.db'));
    const log = new SqliteTurnLog(db);
    const turns = turnsOf('a', 0, 50);
    log.appendSync(turns, T0);
    for (const t of turns) {
      log.markEmbeddedSync('a', [t.id], 'hash');
      log.markPersistedSync('a', t.id, 0.5);
    }
    for (const job of ['embed', 'persist', 'any'] as const) assert.deepEqual(await pages(log, job, T0 + 1, 10), [], job);
    assert.deepEqual(await new SqliteMaintenanceStore(db, 'none-open.db').unfinished(T0 + 1), []);
    db.close();
  });
});
