import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { PostgresVectorStore } from '../../src/adapters/postgres/vector-store.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { vectorIndexContract } from './vector-index.contract.js';

const pg = sharedPostgres();
vectorIndexContract('embedded over PostgreSQL', async () => new EmbeddedVectorIndex(new PostgresVectorStore(await pg())));
