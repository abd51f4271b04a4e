import { join } from 'node:path';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { tmpDir } from '../helpers/tmp.js';
import { vectorIndexContract } from './vector-index.contract.js';

const dir = tmpDir();
vectorIndexContract('embedded (SQLite file)', async () => new EmbeddedVectorIndex(openDatabase(join(dir, 'v.db'))));
