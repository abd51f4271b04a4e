import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteArchiveStore } from '../../../../src/adapters/sqlite/archive-store.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import type { MemoryEntry } from '../../../../src/domain/entry.js';
import { contentHash } from '../../../../src/domain/hash.js';
import { planOf, recordPrepared } from '../../../helpers/sqlite-plan.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * The archival run pages through every archive (those whose embedding is missing are enqueued again).
 * Paged by rowid with `kind` tested on each row, a page read every entry, text and all, until it filled:
 * with few archives, the whole table in one statement (100k turns: ~60 ms of event loop). Migration 23
 * indexes the archives apart; the plan says what a page reads.
 */
describe('SQLite archive store: the archives, page by page', () => {
  it('are every archive in rowid order, read from their own index', async () => {
    const db = openDatabase(join(tmpDir(), 'archives.db'));
    const prepared = recordPrepared(db);
    const longTerm = new SqliteLongTermStore(db);
    const store = new SqliteArchiveStore(db);
    const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
    // one archive in every seventh entry, of two users
    const entries: MemoryEntry[] = Array.from({ length: 60 }, (_, i) => {
      const kind = i % 7 === 3 ? 'archive' : 'turn';
      const content = `${kind} ${i}: ${'words of a session '.repeat(8)}`;
      return { id: `e${i}`, user_id: i % 2 ? 'a' : 'b', session_id: `s${i % 5}`, role: 'user', name: null, kind, content, content_hash: contentHash(content), importance: 0.5, pinned: false, metadata: null, covers: null, created_at: at, updated_at: at };
    });
    await longTerm.upsert(entries);
    const pages: string[][] = [];
    for await (const page of store.archives(3)) pages.push(page.map((e) => e.id));
    assert.deepEqual(pages.flat(), entries.filter((e) => e.kind === 'archive').map((e) => e.id));
    assert.deepEqual(pages.map((p) => p.length), [3, 3, 3]);

    const sql = prepared.find((s) => /\bkind = 'archive'/.test(s))!;
    const reads = planOf(db, sql).filter((d) => /^(SCAN|SEARCH) entries\b/.test(d));
    assert.ok(reads.length > 0, sql);
    for (const d of reads) assert.match(d, /USING (COVERING )?INDEX entries_archives\b/, `a read of the entries beyond the archives: ${JSON.stringify(reads)}`);
    db.close();
  });
});
