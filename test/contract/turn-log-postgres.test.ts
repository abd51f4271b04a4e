import { after } from 'node:test';
import pg from 'pg';
import { PostgresTurnLog } from '../../src/adapters/postgres/turn-log.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { runTurnLogContract } from './turn-log.contract.js';

// a client of its own, outside the store's pool: what another process would find; closed before the
// database is dropped (hooks run in the order they were registered)
let other: pg.Client | null = null;
after(async () => {
  await other?.end();
});
const db = sharedPostgres();
runTurnLogContract('PostgreSQL', async () => {
  const pool = await db();
  if (!other) {
    other = new pg.Client({ connectionString: pool.options.url });
    await other.connect();
  }
  const reader = other;
  return {
    log: new PostgresTurnLog(pool),
    committed: async (userId, id) => (await reader.query('SELECT 1 FROM turns WHERE user_id = $1 AND id = $2', [userId, id])).rowCount === 1,
  };
});
