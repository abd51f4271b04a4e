import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { matchesFilter, type RecordFilter } from '../../../../src/domain/filters.js';
import type { ListOptions } from '../../../../src/ports/long-term.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

const DAY = 86_400_000;

/**
 * `recent` with a period is the retrieval's list of a named period ("what did I do in March?"). Its
 * statement must reach the period through the (user, created_at) index, not walk the user's entries
 * from the newest until it gets there: with bounds written `@from IS NULL OR created_at >= @from`
 * SQLite narrowed the index by the user alone (100k entries of one user: 6-14 ms a period, and as much
 * for a period holding none). better-sqlite3 does not expose the rows a statement visits, so the plan
 * says which loop it runs.
 */
describe('long-term recent: a period is a range of the index', () => {
  it('reads a period by its dates, with or without a filter, and lists what a walk would', async () => {
    const db = openDatabase(join(tmpDir(), 'recent.db'));
    const store = new SqliteLongTermStore(db);
    const entries: MemoryEntry[] = [];
    for (let i = 0; i < 3000; i++) {
      const at = new Date(Date.UTC(2023, 0, 1) + i * (DAY / 4)).toISOString();
      const user = i % 10 === 0 ? 'other' : 'big';
      const content = `errand ${i}`;
      entries.push({
        id: `e${i}`, user_id: user, session_id: `s${i % 7}`, role: i % 2 === 0 ? 'user' : 'assistant', name: null, kind: 'turn', content,
        content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: { part: i % 4 }, covers: null, created_at: at, updated_at: at,
      });
    }
    store.upsertSync(entries);
    db.exec('ANALYZE');

    const prepared = recordPrepared(db);

    const march = { createdFrom: '2023-03-01T00:00:00.000Z', createdBefore: '2023-04-01T00:00:00.000Z' };
    const cases: Array<{ name: string; o: ListOptions; ranged: boolean }> = [
      { name: 'a month', o: { limit: 50, ...march }, ranged: true },
      { name: 'a month, a metadata filter', o: { limit: 50, ...march, where: { metadata: { part: 1 } } }, ranged: true },
      { name: 'a month, a roles filter', o: { limit: 500, ...march, where: { roles: ['assistant'] } }, ranged: true },
      { name: 'a period holding none', o: { limit: 50, createdFrom: '2026-01-01T00:00:00.000Z', createdBefore: '2026-01-02T00:00:00.000Z' }, ranged: true },
      { name: 'from a date on', o: { limit: 50, createdFrom: march.createdFrom }, ranged: true },
      { name: 'before a date', o: { limit: 50, createdBefore: march.createdBefore }, ranged: true },
      { name: 'no period', o: { limit: 50 }, ranged: false },
    ];
    for (const c of cases) {
      const fresh = new SqliteLongTermStore(db);
      prepared.length = 0;
      const got = await fresh.recent('big', c.o);
      const want = entries
        .filter((e) => e.user_id === 'big' && (c.o.createdFrom === undefined || e.created_at >= c.o.createdFrom) && (c.o.createdBefore === undefined || e.created_at < c.o.createdBefore))
        .filter((e) => matchesFilter(e, c.o.where as RecordFilter | undefined))
        .sort((a, b) => b.created_at.localeCompare(a.created_at))
        .slice(0, c.o.limit);
      assert.deepEqual(got.map((e) => e.id), want.map((e) => e.id), `${c.name}: the newest of the period first`);
      if (!c.ranged) continue;
      // the unfiltered statement is prepared with the store, a filtered one when first used
      const sql = c.o.where ? prepared.find((x) => /ORDER BY created_at DESC/.test(x)) : recentStatementOf(fresh);
      assert.ok(sql, `${c.name}: the filtered statement was prepared`);
      const plan = planOf(db, sql);
      assert.ok(
        plan.some((d) => /USING INDEX entries_user_created \(user_id=\? AND created_at>\? AND created_at<\?\)/.test(d)),
        `${c.name}: the period bounds the index walk: ${JSON.stringify(plan)}`,
      );
    }
    db.close();
  });
});

/** the SQL of the store's unfiltered `recent` statement (prepared when the store is made) */
function recentStatementOf(store: SqliteLongTermStore): string {
  return (store as unknown as { s: { recent: { source: string } } }).s.recent.source;
}
