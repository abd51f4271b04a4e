import { PostgresArchiveStore } from '../../src/adapters/postgres/archive-store.js';
import { PostgresLongTermStore } from '../../src/adapters/postgres/long-term.js';
import { Postgres } from '../../src/adapters/postgres/pool.js';
import { PostgresTurnLog } from '../../src/adapters/postgres/turn-log.js';
import { after } from 'node:test';
import { sharedPostgres } from '../helpers/postgres.js';
import { archiveStoreContract } from './archive-store.contract.js';

const shared = sharedPostgres();
const pools: Postgres[] = [];
after(async () => void (await Promise.all(pools.map((p) => p.close()))));
// each fixture its own pool on the one database: what two worker processes on any hosts see
archiveStoreContract('PostgreSQL', async () => {
  const pg = new Postgres({ url: (await shared()).options.url, max: 3 });
  pools.push(pg);
  return { store: new PostgresArchiveStore(pg), turnLog: new PostgresTurnLog(pg), longTerm: new PostgresLongTermStore(pg) };
});
