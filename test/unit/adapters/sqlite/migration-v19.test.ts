import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteErasureStore } from '../../../../src/adapters/sqlite/erasure.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { BEFORE_ENTRY_CHANGES } from '../../../helpers/sqlite-rewind.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * Migrations 19 and 22: the count that what a connection keeps of matched rows
 * (src/adapters/sqlite/match-records.ts) is checked against. It moves with every write that could make
 * a kept row wrong — any update of an entry (its text, name, owner or session; since 22, as the rows a
 * search returns are kept, its importance or pin too), a delete, a VACUUM — and not with an insert, so a
 * chat's new turns keep what was read.
 */
describe('SQLite migration 19: a count of changed and deleted entries', () => {
  it('is added to a file written before it and moves only with the writes that change a kept row', async () => {
    const path = join(tmpDir(), 'entry-changes.db');
    let db = openDatabase(path);
    db.exec(`${BEFORE_ENTRY_CHANGES} PRAGMA user_version = 18`);
    db.close();
    db = openDatabase(path);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.at(-1)!.version);
      const count = () => db.prepare('SELECT n FROM entry_changes').pluck().get() as number;
      const store = new SqliteLongTermStore(db);
      const moves = async (what: string, write: () => unknown, by: number) => {
        const n = count();
        await write();
        assert.equal(count() - n, by, what);
      };
      await moves('inserts', () => store.upsert([0, 1, 2, 3].map((i) => entry('ann', i, `the ferry, note ${i}`))), 0);
      await moves('an importance and a pin', () => store.update('ann', 'ann-0', { importance: 0.9, pinned: true }), 1);
      await moves('a text', () => store.update('ann', 'ann-0', { content: 'the ferry at dawn' }), 1);
      await moves('a name', () => db.prepare("UPDATE entries SET name = 'Ann' WHERE id = 'ann-1'").run(), 1);
      await moves('a session', () => db.prepare("UPDATE entries SET session_id = 'elsewhere' WHERE id = 'ann-1'").run(), 1);
      await moves('an owner', () => db.prepare("UPDATE entries SET user_id = 'bob' WHERE id = 'ann-2'").run(), 1);
      await moves('a delete', () => store.delete('ann', ['ann-3']), 1);
      await moves('a VACUUM', () => new SqliteErasureStore(db).vacuum(), 1);
    } finally {
      db.close();
    }
  });
});
