import { join } from 'node:path';
import { after } from 'node:test';
import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { openSqliteStore, type SqliteStore } from '../../src/adapters/sqlite/open.js';
import { tmpDir } from '../helpers/tmp.js';
import { runMaintenanceContract } from './maintenance.contract.js';

const dir = tmpDir();
const opened: SqliteStore[] = [];
after(() => Promise.all(opened.map((s) => s.close())));
let n = 0;
runMaintenanceContract('SQLite file', async () => {
  const store = await openSqliteStore(join(dir, `maintenance-${++n}.db`));
  opened.push(store);
  return { store, vectors: new EmbeddedVectorIndex(store.db) };
});
