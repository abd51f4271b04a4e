import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { freshPostgresStores } from '../helpers/postgres.js';
import { runMaintenanceContract } from './maintenance.contract.js';

const open = freshPostgresStores();
runMaintenanceContract('PostgreSQL', async () => {
  const store = await open();
  return { store, vectors: new EmbeddedVectorIndex(store.vectorRows) };
});
