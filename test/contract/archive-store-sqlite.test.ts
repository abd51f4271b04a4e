import { join } from 'node:path';
import { SqliteArchiveStore } from '../../src/adapters/sqlite/archive-store.js';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../src/adapters/sqlite/turn-log.js';
import { tmpDir } from '../helpers/tmp.js';
import { archiveStoreContract } from './archive-store.contract.js';

const file = join(tmpDir(), 'archive.db');
// each fixture its own connection to the one file: what two worker processes of one host see
archiveStoreContract('SQLite file', async () => {
  const db = openDatabase(file);
  const turnLog = new SqliteTurnLog(db);
  return { store: new SqliteArchiveStore(db), turnLog, longTerm: new SqliteLongTermStore(db, turnLog.writes) };
});
