import { join } from 'node:path';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { EmbeddedVectorIndex } from '../../src/adapters/embedded/vector-index.js';
import { tmpDir } from '../helpers/tmp.js';
import { vectorIndexContract } from './vector-index.contract.js';

const dir = tmpDir();
vectorIndexContract('embedded (SQLite file)', async () => new EmbeddedVectorIndex(openDatabase(join(dir, 'v.db'))));
// every filtered search through the probe of the unfiltered ranking, and its listings kept (a
// partition of any size; the default only probes a user of 4,096 vectors or more)
vectorIndexContract('embedded (SQLite file), filtered searches probing the unfiltered ranking', async () => new EmbeddedVectorIndex(openDatabase(join(dir, 'v.db')), { probeFrom: 0 }));
