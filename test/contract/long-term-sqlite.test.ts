import { join } from 'node:path';
import { openDatabase } from '../../src/tiers/sqlite/db.js';
import { SqliteLongTermStore } from '../../src/tiers/sqlite/long-term.js';
import { tmpDir } from '../helpers/tmp.js';
import { longTermContract } from './long-term.contract.js';

const db = openDatabase(join(tmpDir(), 'lt.db'));
longTermContract('SQLite file', async () => new SqliteLongTermStore(db));
