import { join } from 'node:path';
import { contentHash } from '../../src/domain/hash.js';
import { openDatabase } from '../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../src/adapters/sqlite/long-term.js';
import { TurnLog } from '../../src/adapters/sqlite/turn-log.js';
import { tmpDir } from '../helpers/tmp.js';
import { longTermContract } from './long-term.contract.js';

const db = openDatabase(join(tmpDir(), 'lt.db'));
longTermContract(
  'SQLite file',
  async () => new SqliteLongTermStore(db),
  async () => {
    const turnLog = new TurnLog(db);
    return {
      store: new SqliteLongTermStore(db, turnLog.writes),
      turns: {
        append: (t) => void turnLog.append([t]),
        delete: (userId, id) => void turnLog.delete(userId, [id]),
        updateContent: (userId, id, content) => void turnLog.updateContent(userId, id, content, contentHash(content)),
      },
    };
  },
);
