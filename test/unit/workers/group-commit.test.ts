import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import type { Processor } from '../../../queues/queue.js';
import { openDatabase } from '../../../src/tiers/sqlite/db.js';
import { GroupCommit } from '../../../workers/group-commit.js';
import { tmpDir } from '../../helpers/tmp.js';

const log = pino({ level: 'silent' });
const meta = (i: number) => ({ jobId: `j${i}`, attempt: 1 });

function setup(maxHoldMs = 50) {
  const path = join(tmpDir(), 'gc.db');
  const db = openDatabase(path);
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY); CREATE TABLE parent (id TEXT PRIMARY KEY);');
  db.exec('CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
  const other = new Database(path);
  other.pragma('busy_timeout = 5000');
  const group = new GroupCommit(db, { maxHoldMs, gapMs: 5 }, log);
  return { db, other, group, close: () => (other.close(), db.close()) };
}

describe('GroupCommit', () => {
  it('commits the writes of jobs running at once together, and a job ends only once its writes are committed', async () => {
    const { db, other, group, close } = setup();
    const insert = db.prepare('INSERT INTO t (id) VALUES (?)');
    const tx = db.transaction((id: string) => insert.run(id));
    const visible = other.prepare('SELECT count(*) AS n FROM t WHERE id = ?');
    const write: Processor<'persist'> = async (d) => {
      await new Promise((r) => setTimeout(r, 1 + (Number(d.turn_id.slice(1)) % 5)));
      tx(d.turn_id); // a store's own transaction becomes a savepoint
      return d.turn_id;
    };
    const { persist } = group.wrap({ persist: write });
    const seenCommitted: boolean[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        assert.equal(await persist!({ turn_id: `t${i}` }, meta(i)), `t${i}`);
        // read through another connection: only committed rows are visible there
        seenCommitted.push((visible.get(`t${i}`) as { n: number }).n === 1);
      }),
    );
    assert.equal(seenCommitted.length, 40);
    assert.ok(seenCommitted.every(Boolean), 'every job saw its row committed when it ended');
    const { jobs, commits } = group.stats();
    assert.equal(jobs, 40);
    assert.ok(commits < 40 && commits >= 1, `${commits} commits for 40 jobs`);
    close();
  });

  it('fails every job of a transaction whose commit fails, keeping none of their writes', async () => {
    const { db, other, group, close } = setup();
    const { persist } = group.wrap({
      persist: async (d) => {
        // the deferred foreign key is checked at COMMIT: the whole group transaction fails there
        db.prepare('INSERT INTO child (id, parent) VALUES (?, ?)').run(d.turn_id, d.turn_id === 'bad' ? 'missing' : null);
      },
    });
    const results = await Promise.allSettled([persist!({ turn_id: 'ok1' }, meta(1)), persist!({ turn_id: 'bad' }, meta(2)), persist!({ turn_id: 'ok2' }, meta(3))]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'rejected']);
    assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.equal((other.prepare('SELECT count(*) AS n FROM child').get() as { n: number }).n, 0);
    // the next jobs run normally
    await persist!({ turn_id: 'ok3' }, meta(4));
    assert.equal((other.prepare('SELECT count(*) AS n FROM child').get() as { n: number }).n, 1);
    close();
  });

  it('a long job does not hold the write lock past maxHoldMs: another process writes meanwhile', async () => {
    const { db, other, group, close } = setup(20);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { persist } = group.wrap({
      persist: async (d) => {
        db.prepare('INSERT INTO t (id) VALUES (?)').run(d.turn_id);
        await held;
      },
    });
    const job = persist!({ turn_id: 'long' }, meta(1));
    await new Promise((r) => setTimeout(r, 150));
    // would wait for the lock (and block this thread) if the group transaction were still open
    other.prepare('INSERT INTO t (id) VALUES (?)').run('from-another-process');
    assert.equal((other.prepare("SELECT count(*) AS n FROM t WHERE id = 'long'").get() as { n: number }).n, 1, 'committed by the hold timer');
    release();
    await job;
    close();
  });
});
