import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { SqliteTurnLog } from '../../src/adapters/sqlite/turn-log.js';
import { readDb } from '../helpers/read-db.js';
import { tmpDir } from '../helpers/tmp.js';
import { runTurnLogContract } from './turn-log.contract.js';

const path = join(tmpDir(), 'turns.db');
const log = new SqliteTurnLog(openDatabase(path));
runTurnLogContract('SQLite file', async () => ({
  log,
  // another connection to the file: what a second process (or one after a crash) would find
  committed: async (userId, id) => readDb(path, (db) => db.prepare('SELECT 1 FROM turns WHERE user_id = ? AND id = ?').get(userId, id) !== undefined),
}));

describe('SQLite turn log, neighbours', () => {
  it('refuses a count of neighbours it reads with one subquery each unless a small whole number', async () => {
    await assert.rejects(log.neighbours('u', ['x'], 1.5, 1), /before must be an integer from 0 to 16, not 1.5/);
    await assert.rejects(log.neighbours('u', ['x'], 1, 17), /after must be an integer from 0 to 16, not 17/);
    await assert.rejects(log.neighbours('u', ['x'], -1, 1), /before must be/);
  });
});
