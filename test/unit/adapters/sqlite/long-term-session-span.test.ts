import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { COMMON_TERM_DOCS, SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * A big user's search scores its newest matches meeting the filter. Within a few sessions of long
 * ago, finding them walked every newer match of the whole history (100k real turns of one user,
 * three sessions named: p99 263 ms); their entries lie in one stretch of rowids, and only that
 * stretch is read. The rows read are counted at the per-word statement (better-sqlite3 exposes no
 * per-statement row counts).
 */
describe('long-term text search within named sessions', () => {
  it('reads the matches of those sessions\' stretch of the index, not the whole history\'s', async () => {
    const db = openDatabase(join(tmpDir(), 'span.db'));
    const user = 'big';
    const total = COMMON_TERM_DOCS + 1000;
    const entries: MemoryEntry[] = [];
    // every entry holds the word: a big user's query with more matches than it scores
    for (let i = 0; i < total; i++) {
      const session = i < 20 ? 'first-week' : `s${Math.floor(i / 20)}`;
      const content = `the ferry timetable changed again, note ${i}`;
      const at = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
      entries.push({
        id: `e${i}`, user_id: user, session_id: session, role: 'user', name: null, kind: 'turn', content, content_hash: contentHash(content),
        importance: 0.5, pinned: false, metadata: {}, covers: null, created_at: at, updated_at: at,
      });
    }
    new SqliteLongTermStore(db, undefined, { textSearchThread: false }).upsertSync(entries);

    let read = 0;
    const prepare = db.prepare.bind(db);
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      if (sql.includes('@floor')) {
        const all = st.all.bind(st);
        st.all = ((...args: unknown[]) => {
          const rows = all(...(args as [])) as unknown[];
          read += rows.length;
          return rows;
        }) as typeof st.all;
      }
      return st;
    }) as typeof db.prepare;
    const store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });

    const hits = await store.searchText(user, 'ferry', { limit: 5, where: { session_ids: ['first-week'] } });
    assert.equal(hits.length, 5);
    assert.ok(hits.every((h) => h.entry.session_id === 'first-week'), JSON.stringify(hits.map((h) => h.entry.id)));
    assert.ok(read > 0 && read <= 20, `rows read: ${read} (the sessions hold 20 of ${total} matches)`);

    assert.deepEqual(await store.searchText(user, 'ferry', { limit: 5, where: { session_ids: ['never-held'] } }), []);
    db.close();
  });
});
