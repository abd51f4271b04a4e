import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { runMaintenanceContract } from './maintenance.contract.js';
import { freshSqliteStores } from './sqlite-stores.js';

const open = freshSqliteStores('maintenance');
runMaintenanceContract('SQLite file', async () => {
  const store = await open();
  return { store, vectors: new EmbeddedVectorIndex(store.db) };
});
