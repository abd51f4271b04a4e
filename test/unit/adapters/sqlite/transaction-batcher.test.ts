import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { TransactionBatcher } from '../../../../src/adapters/sqlite/transaction-batcher.js';
import { SLICE_MS } from '../../../../src/pace.js';
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
  it('commits small writes of one turn together', async () => {
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
});
