import { freshPostgresStores } from '../helpers/postgres.js';
import { runErasureContract } from './erasure.contract.js';

runErasureContract('PostgreSQL', freshPostgresStores());
