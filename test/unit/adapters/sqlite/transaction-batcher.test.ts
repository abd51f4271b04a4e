import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { TransactionBatcher } from '../../../../src/adapters/sqlite/transaction-batcher.js';
import { answering, SLICE_MS, sliceOver } from '../../../../src/pace.js';
import { tmpDir } from '../../../helpers/tmp.js';

const busy = (ms: number) => {
  for (const until = performance.now() + ms; performance.now() < until; );
};

/** a file with one table, and a count of the transactions begun on it */
function file(name: string) {
  const db = openDatabase(join(tmpDir(), name));
  db.exec('CREATE TABLE w (n INTEGER NOT NULL UNIQUE)');
  let transactions = 0;
  const begin = db.transaction.bind(db);
  db.transaction = ((fn: Parameters<typeof begin>[0]) => {
    transactions++;
    return begin(fn);
  }) as typeof db.transaction;
  return { db, transactions: () => transactions };
}

/**
 * Writes made in one turn of the event loop commit together, but a batch whose writes outlast the
 * process's slice of work (src/pace.ts) commits what it wrote and goes on after `room()`: 30 turns of
 * 32,000 characters, indexed with their repeats counted, held the event loop ~100 ms in one
 * transaction.
 */
describe('TransactionBatcher', () => {
  it('commits small writes of one turn together', async (t) => {
    // the clock stands still: on a loaded machine 100 inserts outlasted a slice (a full test run), and
    // the slice's bound is the next test's
    const now = performance.now();
    t.mock.method(performance, 'now', () => now);
    const { db, transactions } = file('batch-small.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const results = await Promise.all(Array.from({ length: 100 }, (_, n) => batcher.run(() => put.run(n).changes)));
    assert.deepEqual(results, Array(100).fill(1));
    assert.equal(transactions(), 1);
    db.close();
  });

  it('commits a batch that outlasts the slice in parts, in order, each write answered with its own result', async () => {
    const { db, transactions } = file('batch-long.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const writes = 12;
    // each write half a slice: at most two of them (and what ran before them in the turn) a transaction
    const results = await Promise.all(
      Array.from({ length: writes }, (_, n) =>
        batcher.run(() => {
          busy(SLICE_MS / 2);
          put.run(n);
          return n;
        }),
      ),
    );
    assert.deepEqual(results, Array.from({ length: writes }, (_, n) => n));
    assert.ok(transactions() >= writes / 2, `${transactions()} transactions for ${writes} writes of half a slice each`);
    assert.deepEqual(db.prepare('SELECT n FROM w ORDER BY rowid').pluck().all(), results);
    db.close();
  });

  it('still fails a bad write alone', async () => {
    const { db } = file('batch-bad.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const outcomes = await Promise.allSettled([1, 2, 2, 3].map((n) => batcher.run(() => put.run(n))));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(db.prepare('SELECT n FROM w ORDER BY n').pluck().all(), [1, 2, 3]);
    db.close();
  });

  it("commits a write someone waits on before the jobs' writes queued ahead of it, in a transaction of its own", async () => {
    const { db, transactions } = file('lanes-order.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const jobs = [1, 2, 3].map((n) => batcher.later(() => put.run(n).lastInsertRowid));
    const waited = batcher.run(() => put.run(100).lastInsertRowid);
    const [first, ...after] = await Promise.all([waited, ...jobs]);
    assert.equal(first, 1, 'the waited-on write holds the first rowid');
    assert.deepEqual(after, [2, 3, 4]);
    assert.equal(transactions(), 2);
    db.close();
  });

  it("commits the jobs' writes behind one flush of waited-on writes, not behind a steady stream of them", async () => {
    const { db } = file('lanes-stream.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    let stop = false;
    let n = 1000;
    // a waited-on write every turn of the event loop, as a stream of requests makes
    const stream = (async () => {
      while (!stop && n < 2000) {
        void batcher.run(() => put.run(n++));
        await new Promise((r) => setImmediate(r));
      }
    })();
    const writesBefore = n;
    try {
      assert.equal(await batcher.later(() => put.run(1).changes), 1);
    } finally {
      stop = true;
      await stream;
    }
    assert.ok(n - writesBefore <= 4, `the job's write waited for ${n - writesBefore} waited-on writes`);
    db.close();
  });

  it('commits a waited-on write at once while a request is answered, though a job has spent the slice', async () => {
    const { db } = file('lanes-slice.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const answered = answering();
    try {
      const order: string[] = [];
      await new Promise((r) => setTimeout(r, 0));
      // in the same turn of the event loop: a job's work spends the process's slice (src/pace.ts), then
      // the flush of a write made meanwhile; a pause would put it behind the timer
      setImmediate(() => {
        assert.equal(sliceOver(), false);
        busy(SLICE_MS);
      });
      const waited = batcher.run(() => put.run(1)).then(() => order.push('write'));
      const timer = new Promise<void>((r) => setTimeout(() => (order.push('timer'), r()), 1));
      await Promise.all([timer, waited]);
      assert.deepEqual(order, ['write', 'timer'], 'the write committed in the turn it was flushed, not after a pause');
    } finally {
      answered();
    }
    db.close();
  });

  it('commits every write of both lanes at drain, before the connection closes', async () => {
    const { db } = file('lanes-drain.db');
    const batcher = new TransactionBatcher(db);
    const put = db.prepare('INSERT INTO w (n) VALUES (?)');
    const writes = [batcher.later(() => put.run(1)), batcher.run(() => put.run(2)), batcher.later(() => put.run(3))];
    batcher.drain();
    assert.deepEqual(db.prepare('SELECT n FROM w ORDER BY rowid').pluck().all(), [2, 1, 3]);
    db.close();
    await Promise.all(writes);
    // nothing is left to flush on a closed connection
    await new Promise((r) => setTimeout(r, 5));
  });
});

