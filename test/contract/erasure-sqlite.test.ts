import { join } from 'node:path';
import { after } from 'node:test';
import { openSqliteStore, type SqliteStore } from '../../src/adapters/sqlite/open.js';
import { tmpDir } from '../helpers/tmp.js';
import { runErasureContract } from './erasure.contract.js';

const dir = tmpDir();
const opened: SqliteStore[] = [];
after(() => Promise.all(opened.map((s) => s.close())));
let n = 0;
runErasureContract('SQLite file', async () => {
  const store = await openSqliteStore(join(dir, `erasure-${++n}.db`));
  opened.push(store);
  return store;
});
