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
