import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { matchesFilter, type RecordFilter } from '../../../../src/domain/filters.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { FILTER_RECORDS, PLAN_FILTER_CASES } from '../../../contract/filter-cases.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A filtered text search must read about the rows the plain one reads: the query's matches. SQLite
 * does not expose per-statement row counts (sqlite3_stmt_scanstatus) through better-sqlite3, so the
 * rows a statement visits are read from its plan: the outer loop is what it walks. Driven by the
 * MATCH, it visits the matches; driven by an index of `entries` (user and time, user and session), it
 * visits every row of the user in range and runs the whole MATCH again for each one (RealMem, 5k
 * turns: 126 ms for a created_before filter, 3 ms plain). Each filter kind alone (created_after and
 * created_before each on its own too) and all of them at once; each filtered statement's plan is the
 * plain one's, step for step: a match's owner, length and the attributes a filter tests are read from
 * its record in entry_sizes (migration 18), never from its row of entries, whose text a long reply
 * spreads over pages (100k real turns of one user: 2.8 µs a row read, 5.6 of a filtered search's
 * 8.5 ms).
 */
describe('long-term text search: a filter does not change what the statement walks', () => {
  it('every filter kind drives its statement from the match, as the plain search does', async () => {
    const db = openDatabase(join(tmpDir(), 'plan.db'));
    const store = new SqliteLongTermStore(db);
    const user = 'big';
    const entries: MemoryEntry[] = [];
    // 3,000 rows of the user (above the owner clause's threshold) of which twelve hold the query's word,
    // one of each filter record (251 is 11 modulo 12), so every case has a match to find
    for (let i = 0; i < 3000; i++) {
      const r = FILTER_RECORDS[i % FILTER_RECORDS.length]!;
      const content = i % 251 === 0 ? `the narwhal ferry timetable, note ${i}` : `weather and errands, day ${i}`;
      entries.push({
        id: `e${i}`, user_id: user, session_id: r.session_id, role: r.role, name: null, kind: r.kind, content, content_hash: contentHash(content),
        importance: 0.5, pinned: false, metadata: r.metadata, covers: null, created_at: r.created_at, updated_at: r.created_at,
      });
    }
    store.upsertSync(entries);
    db.exec('ANALYZE');

    // the SQL text of every statement the store prepares from here on
    const prepared = recordPrepared(db);

    /** the plans of the text-search statements prepared by one search, in the order prepared */
    const plansOf = (name: string): string[][] => {
      const statements = prepared.filter((sql) => sql.includes('entries_fts') && /JOIN (entries|entry_sizes)\b/.test(sql));
      assert.ok(statements.length > 0, `${name}: the search prepared its statements`);
      return statements.map((sql) => planOf(db, sql));
    };
    // a store of its own for each search: two cases with the same conditions (kinds: summary, kinds:
    // turn) would share one prepared statement, and the second would prepare nothing to look at
    const search = (where?: RecordFilter) => new SqliteLongTermStore(db).searchText(user, 'narwhal', { limit: 5, where });
    prepared.length = 0;
    assert.equal((await search()).length, 5, 'plain');
    const plain = plansOf('plain');
    // the plain search reads a match's owner and length from entry_sizes, and no row of entries
    for (const plan of plain) assert.ok(!plan.some((d) => /^SEARCH e /.test(d)), `plain: ${JSON.stringify(plan)}`);

    for (const c of PLAN_FILTER_CASES) {
      prepared.length = 0;
      const hits = await search(c.filter);
      const want = entries.filter((e) => e.content.includes('narwhal') && matchesFilter(e, c.filter)).length;
      assert.equal(hits.length, Math.min(5, want), c.name);
      const plans = plansOf(c.name);
      // the plain ones' steps: no row of entries is read for the conditions
      assert.deepEqual(plans, plain, `${c.name}: the filtered statements' plans are the plain ones'`);
      // the conditions are met once per matched row, each record read by its rowid (never a walk of
      // the user's rows through an index of entries)
      // (and a long match's recorded repeats likewise, once per row, and the matched rows' lengths)
      // the stretch of rowids named sessions lie in is read from the index of their own rows
      for (const sql of prepared.filter((x) => x.includes('json_each') && x.includes('max(rowid)'))) {
        const plan = planOf(db, sql);
        assert.ok(plan.includes('SEARCH entries USING COVERING INDEX entries_user_session (user_id=? AND session_id=?)'), `${c.name}: ${JSON.stringify(plan)}`);
      }
      for (const sql of prepared.filter((x) => x.includes('json_each') && !x.includes('max(rowid)'))) {
        const plan = planOf(db, sql);
        // the lengths of a message's sessions, each by its id (sessionScores)
        if (sql.includes('session_sizes')) {
          assert.deepEqual(plan.filter((d) => /^(SCAN|SEARCH) s\b/.test(d)), ['SEARCH s USING INTEGER PRIMARY KEY (rowid=?)'], `${c.name}: ${JSON.stringify(plan)}`);
          continue;
        }
        const table = sql.includes('entry_repeats') ? 'r' : sql.includes('entry_sizes') ? 'z' : 'e';
        assert.notEqual(table, 'e', `${c.name}: a row of entries read for the conditions: ${sql}`);
        assert.ok(plan.includes(`SEARCH ${table} USING INTEGER PRIMARY KEY (rowid=?)`) && !plan.some((d) => /^(SCAN (e|r|z)|SEARCH (e|r|z) USING (COVERING )?INDEX)/.test(d)), `${c.name}: ${JSON.stringify(plan)}`);
      }
      for (const plan of plans) {
        const loops = plan.filter((d) => /^(SCAN|SEARCH) /.test(d));
        assert.match(loops[0] ?? '', /^SCAN (entries_fts|f) VIRTUAL TABLE/, `${c.name}: outer loop ${JSON.stringify(plan)}`);
        // each match reads its size record by rowid, and nothing else (and its recorded repeats by
        // rowid; a statement over a subquery of the match reads that subquery's rows)
        assert.ok(loops.slice(1).every((d) => /^(SEARCH (z|r) USING INTEGER PRIMARY KEY \(rowid=\?\)|(SCAN|SEARCH) \(subquery-\d+\))/.test(d)), `${c.name}: ${JSON.stringify(plan)}`);
      }
    }
    db.close();
  });
});
