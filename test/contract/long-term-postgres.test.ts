import { contentHash } from '../../src/domain/hash.js';
import { PostgresLongTermStore } from '../../src/adapters/postgres/long-term.js';
import { PostgresTurnLog } from '../../src/adapters/postgres/turn-log.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { longTermContract } from './long-term.contract.js';

const pg = sharedPostgres();
longTermContract(
  'PostgreSQL',
  async () => new PostgresLongTermStore(await pg()),
  async () => {
    const db = await pg();
    const turnLog = new PostgresTurnLog(db);
    return {
      store: new PostgresLongTermStore(db),
      turns: {
        append: async (t) => void (await turnLog.append([t])),
        delete: async (userId, id) => void (await turnLog.delete(userId, [id])),
        updateContent: async (userId, id, content) => void (await turnLog.updateContent(userId, id, content, contentHash(content))),
      },
    };
  },
);
