import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { contentHash } from '../../../../src/domain/hash.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MIGRATIONS } from '../../../../src/adapters/sqlite/migrations.js';
import { SqliteTurnLog } from '../../../../src/adapters/sqlite/turn-log.js';
import { tmpDir } from '../../../helpers/tmp.js';

const AT = '2026-01-01T00:00:00.000Z';

/** A file as the builds before per-user ids wrote it: schema v5, ids one namespace for every user. */
function v5File(path: string): void {
  const db = new Database(path);
  for (const m of MIGRATIONS.filter((x) => x.version <= 5)) db.exec(m.sql);
  db.pragma('user_version = 5');
  const turn = db.prepare(
    `INSERT INTO turns (id, user_id, session_id, role, name, content, content_hash, created_at, importance, pinned, metadata, accepted_at, embedded_with, persisted_at)
     VALUES (?, ?, 's', 'user', NULL, ?, ?, ?, 0.9, 0, NULL, 1, 'hash-v1', 1)`,
  );
  const entry = db.prepare(
    `INSERT INTO entries (id, user_id, session_id, role, name, kind, content, content_hash, importance, pinned, metadata, covers, created_at, updated_at)
     VALUES (?, ?, 's', ?, NULL, ?, ?, ?, 0.9, 0, NULL, ?, ?, ?)`,
  );
  const vector = db.prepare(
    `INSERT INTO vectors (id, embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector)
     VALUES (?, 'hash-v1', 2, ?, 's', 'user', NULL, ?, ?, ?, ?, ?)`,
  );
  const blob = Buffer.from(new Float32Array([1, 0]).buffer);
  for (const [id, user, text] of [['t1', 'ann', 'Ann keeps bees in Porto'], ['t2', 'bob', 'Bob sails to Faro']] as const) {
    turn.run(id, user, text, contentHash(text), AT);
    entry.run(id, user, 'user', 'turn', text, contentHash(text), null, AT, AT);
    vector.run(id, user, 'turn', text, contentHash(text), AT, blob);
  }
  entry.run('summary-abc', 'ann', 'system', 'summary', 'Summary: bees', contentHash('Summary: bees'), JSON.stringify(['t0']), AT, AT);
  entry.run('archive-xyz', 'ann', 'system', 'archive', 'Archived conversation: bees', contentHash('Archived conversation: bees'), JSON.stringify(['summary-abc', 't1']), AT, AT);
  vector.run('archive-xyz', 'ann', 'archive', 'Archived conversation: bees', contentHash('Archived conversation: bees'), AT, blob);
  db.prepare('INSERT INTO vector_deletes (id, queued_at) VALUES (?, 1)').run('t2');
  db.close();
}

describe('SQLite migration 6: memory ids scoped to their user', () => {
  it('migrates a v5 file: keys become (user, id), generated ids move to their namespace, the text index still answers', async () => {
    const path = join(tmpDir(), 'v5.db');
    v5File(path);
    const db = openDatabase(path);
    try {
      assert.equal(db.pragma('user_version', { simple: true }), MIGRATIONS[MIGRATIONS.length - 1]!.version);
      const pk = (table: string) =>
        (db.prepare('SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk').all(table) as Array<{ name: string }>).map((c) => c.name);
      assert.deepEqual(pk('turns'), ['user_id', 'id']);
      assert.deepEqual(pk('entries'), ['user_id', 'id']);
      // migration 15 adds the part (a long turn's passages); rows from before are whole texts
      assert.deepEqual(pk('vectors'), ['user_id', 'id', 'embedder', 'part']);
      assert.deepEqual(db.prepare('SELECT DISTINCT part FROM vectors').pluck().all(), [0]);
      assert.deepEqual(pk('vector_deletes'), ['user_id', 'id']);

      const ids = (db.prepare('SELECT user_id, id, kind, covers FROM entries ORDER BY rowid').all() as Array<{ user_id: string; id: string; kind: string; covers: string | null }>);
      assert.deepEqual(ids.map((e) => e.id), ['t1', 't2', 'summary~abc', 'archive~xyz']);
      assert.deepEqual(JSON.parse(ids[3]!.covers!), ['summary~abc', 't1'], "an archive's covers follow the rename");
      assert.deepEqual(db.prepare("SELECT id FROM vectors WHERE kind = 'archive'").pluck().all(), ['archive~xyz']);
      assert.deepEqual(db.prepare('SELECT user_id, id FROM vector_deletes').all(), [{ user_id: 'bob', id: 't2' }]);

      const longTerm = new SqliteLongTermStore(db);
      // rowids were kept: the FTS index (external content) still finds the text, scoped to the user
      const hits = await longTerm.searchText('ann', 'bees', { limit: 5 });
      {
        assert.deepEqual(hits.map((h) => h.entry.id).sort(), ['archive~xyz', 'summary~abc', 't1'].sort());
        db.prepare("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')").run();
        // and the new keys work: bob may now use ann's id
        const turns = new SqliteTurnLog(db);
        const r = await turns.append([{ id: 't1', user_id: 'bob', session_id: 's', role: 'user', name: null, content: 'Bob has his own t1', content_hash: contentHash('Bob has his own t1'), created_at: AT, importance: null, pinned: false, metadata: null }]);
        assert.equal(r.accepted.length, 1);
        assert.equal((await turns.get('ann', 't1'))?.content, 'Ann keeps bees in Porto');
        assert.equal((await turns.get('bob', 't1'))?.content, 'Bob has his own t1');
        assert.equal((await longTerm.get('ann', 'archive~xyz'))?.kind, 'archive');
        // the vector change log starts over: every reader reloads once
        const state = db.prepare('SELECT pruned_through FROM vector_changes_state').get() as { pruned_through: number };
        assert.equal((db.prepare('SELECT count(*) AS n FROM vector_changes WHERE seq <= ?').get(state.pruned_through) as { n: number }).n, 0);
      }
    } finally {
      db.close();
    }
  });
});
