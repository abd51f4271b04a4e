import { runExchangeContract } from './exchange.contract.js';
import { freshSqliteStores } from './sqlite-stores.js';

runExchangeContract('SQLite file', freshSqliteStores('exchange'));
