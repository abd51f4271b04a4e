import type { Logger } from '../../logger.js';
import type { DurableStore } from '../../ports/durable-store.js';
import { SqliteArchiveStore } from './archive-store.js';
import { openDatabase, type Db } from './db.js';
import { SqliteErasureStore } from './erasure.js';
import { mappingErrors, sqliteError } from './errors.js';
import { SqliteExchangeStore } from './exchange.js';
import { SqliteLongTermStore } from './long-term.js';
import { SqliteMaintenanceStore } from './maintenance.js';
import { TransactionBatcher } from './transaction-batcher.js';
import { SqliteTurnLog } from './turn-log.js';

/**
 * The durable store on one SQLite file. `db` is for the other adapters over the same file (the
 * embedded vector index) and for tests that read the file; use cases and doors see the ports only.
 */
export interface SqliteStore extends DurableStore {
  readonly kind: 'sqlite';
  readonly db: Db;
  readonly path: string;
  readonly turnLog: SqliteTurnLog;
  readonly longTerm: SqliteLongTermStore;
  /** the batcher the turn log and long-term store commit through (the embedded vector index may join it) */
  readonly writes: TransactionBatcher;
}

/**
 * Opens (creating when needed, migrating) the SQLite file and the store's parts over it. The turn log
 * and the long-term store share one transaction batcher: the connection's writes are one queue of
 * group commits. Every part's driver errors leave it as the error catalog's (see errors.ts).
 */
export async function openSqliteStore(path: string, log?: Logger): Promise<SqliteStore> {
  let db: Db;
  try {
    db = openDatabase(path);
  } catch (err) {
    throw sqliteError(err, path);
  }
  const writes = new TransactionBatcher(db);
  const turnLog = new SqliteTurnLog(db, writes);
  const longTerm = new SqliteLongTermStore(db, writes);
  let closed = false;
  log?.debug({ path }, 'opened the SQLite store');
  return {
    kind: 'sqlite',
    db,
    path,
    where: path,
    writes,
    turnLog: mappingErrors(turnLog, path),
    longTerm: mappingErrors(longTerm, path),
    archives: mappingErrors(new SqliteArchiveStore(db), path),
    erasure: mappingErrors(new SqliteErasureStore(db), path),
    maintenance: mappingErrors(new SqliteMaintenanceStore(db, path), path),
    exchange: mappingErrors(new SqliteExchangeStore(db, turnLog, longTerm), path),
    async close() {
      if (closed) return;
      closed = true;
      // jobs' writes still lingering in the batcher's later lane
      writes.drain();
      db.close();
    },
  };
}
