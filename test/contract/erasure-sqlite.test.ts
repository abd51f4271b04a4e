import { runErasureContract } from './erasure.contract.js';
import { freshSqliteStores } from './sqlite-stores.js';

runErasureContract('SQLite file', freshSqliteStores('erasure'));
