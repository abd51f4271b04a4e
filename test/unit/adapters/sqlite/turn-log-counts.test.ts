import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { contentHash } from '../../../../src/domain/hash.js';
import type { Turn } from '../../../../src/domain/turn.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * The turn log's counts answer every `/health` asked with a key and every `/metrics` scrape. Counted
 * in one pass with FILTERs, they read every turn, text and all (100k real turns: 62 ms of event loop
 * each time, growing with the log); each from an index, 0.1 ms. The plan says what the statement reads.
 */
describe('SQLite turn log counts', () => {
  it('are right and read no turn, only indexes', async () => {
    const db = openDatabase(join(tmpDir(), 'counts.db'));
    const prepared = recordPrepared(db);
    const log = new SqliteTurnLog(db);
    const turns: Turn[] = Array.from({ length: 30 }, (_, i) => {
      const content = `turn ${i} ${'of some length '.repeat(20)}`;
      return { id: `t${i}`, user_id: 'u', session_id: 's', role: 'user', name: null, content, content_hash: contentHash(content), created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), importance: null, pinned: false, metadata: null };
    });
    log.appendSync(turns);
    for (const t of turns.slice(0, 20)) log.markEmbeddedSync('u', [t.id], 'hash');
    for (const t of turns.slice(0, 25)) log.markPersistedSync('u', t.id, 0.5);
    assert.deepEqual(await log.counts(), { total: 30, pending_embed: 10, pending_persist: 5 });

    const sql = prepared.find((s) => /\bAS pending_embed\b/.test(s))!;
    const plan = planOf(db, sql);
    const reads = plan.filter((d) => /^(SCAN|SEARCH) turns\b/.test(d));
    assert.equal(reads.length, 3, JSON.stringify(plan));
    for (const d of reads) assert.match(d, /USING (COVERING )?INDEX (sqlite_autoindex_turns_1|turns_user_session|turns_pending_embed|turns_pending_persist)\b/, `a read of the turns themselves: ${JSON.stringify(plan)}`);
    db.close();
  });
});
