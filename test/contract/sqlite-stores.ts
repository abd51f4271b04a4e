import { join } from 'node:path';
import { after } from 'node:test';
import { openSqliteStore, type SqliteStore } from '../../src/adapters/sqlite/open.js';
import { tmpDir } from '../helpers/tmp.js';

/** Opens a store on a fresh SQLite file at each call; all are closed when the test file ends. */
export function freshSqliteStores(prefix: string): () => Promise<SqliteStore> {
  const dir = tmpDir();
  const opened: SqliteStore[] = [];
  after(() => Promise.all(opened.map((s) => s.close())));
  let n = 0;
  return async () => {
    const store = await openSqliteStore(join(dir, `${prefix}-${++n}.db`));
    opened.push(store);
    return store;
  };
}
