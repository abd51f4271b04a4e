import { freshPostgresStores } from '../helpers/postgres.js';
import { runExchangeContract } from './exchange.contract.js';

runExchangeContract('PostgreSQL', freshPostgresStores());
