import { join } from 'node:path';
import { contentHash } from '../../src/domain/hash.js';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../src/adapters/sqlite/long-term.js';
import { SqliteTurnLog } from '../../src/adapters/sqlite/turn-log.js';
import { tmpDir } from '../helpers/tmp.js';
import { longTermContract } from './long-term.contract.js';

const db = openDatabase(join(tmpDir(), 'lt.db'));
longTermContract(
  'SQLite file',
  async () => new SqliteLongTermStore(db),
  async () => {
    const turnLog = new SqliteTurnLog(db);
    return {
      store: new SqliteLongTermStore(db, turnLog.writes),
      turns: {
        append: async (t) => void (await turnLog.append([t])),
        delete: async (userId, id) => void (await turnLog.delete(userId, [id])),
        updateContent: async (userId, id, content) => void (await turnLog.updateContent(userId, id, content, contentHash(content))),
      },
    };
  },
);
