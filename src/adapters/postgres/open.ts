import type { Logger } from '../../logger.js';
import { ConfigError } from '../../errors.js';
import type { DurableStore } from '../../ports/durable-store.js';
import { PostgresArchiveStore } from './archive-store.js';
import { PostgresErasureStore } from './erasure.js';
import { PostgresExchangeStore } from './exchange.js';
import { PostgresMaintenanceStore } from './maintenance.js';
import { PostgresLongTermStore } from './long-term.js';
import { LATEST_VERSION, migrate } from './migrations.js';
import { Postgres, type PostgresOptions } from './pool.js';
import { PostgresTurnLog } from './turn-log.js';
import { PostgresVectorStore } from './vector-store.js';

export interface OpenPostgresOptions extends Omit<PostgresOptions, 'url'> {
  /** bring the schema up to date at open (default true; every process may: see migrate) */
  migrate?: boolean;
}

/** The durable store on PostgreSQL: every port's adapter over one pool. */
export interface PostgresStore extends DurableStore {
  readonly kind: 'postgres';
  /** the URL without its password (reports, doctor) */
  readonly where: string;
  readonly pg: Postgres;
  readonly turnLog: PostgresTurnLog;
  readonly longTerm: PostgresLongTermStore;
  readonly archives: PostgresArchiveStore;
  /** the embedded vector index's rows and change log (when qdrant_url is not set) */
  readonly vectorRows: PostgresVectorStore;
  close(): Promise<void>;
}

/**
 * Opens the PostgreSQL database `url` as the durable store: connects, migrates, and returns the
 * adapters of every port. A database that does not answer is a start-up error naming the URL without
 * its password (`ConfigError`: the process does not start) — a durable store has no fallback, and
 * writing to a local file instead would split the data between hosts. Once open, a database that goes
 * away makes calls fail with `BackendUnavailableError` (503) until it returns; see `Postgres`.
 */
export async function openPostgresStore(url: string, log: Logger | undefined, options: OpenPostgresOptions = {}): Promise<PostgresStore> {
  const { migrate: runMigrations = true, ...poolOptions } = options;
  const pg = new Postgres({ url, ...poolOptions });
  try {
    await pg.query('SELECT 1');
  } catch (err) {
    await pg.close().catch(() => {});
    throw new ConfigError(`cannot open the durable store: PostgreSQL at ${pg.where} (database_url) does not answer: ${reasonOf(err, url)}`, [
      { path: 'database_url', message: `${pg.where} does not answer` },
    ]);
  }
  try {
    const applied = runMigrations ? await migrate(pg) : [];
    log?.info({ database: pg.where, schema_version: LATEST_VERSION, applied }, 'durable store: PostgreSQL');
  } catch (err) {
    await pg.close().catch(() => {});
    throw new ConfigError(`cannot open the durable store: PostgreSQL at ${pg.where}: ${reasonOf(err, url)}`, [{ path: 'database_url', message: reasonOf(err, url) }]);
  }
  let closed = false;
  const store: PostgresStore = {
    kind: 'postgres',
    where: pg.where,
    pg,
    turnLog: new PostgresTurnLog(pg),
    longTerm: new PostgresLongTermStore(pg),
    archives: new PostgresArchiveStore(pg),
    erasure: new PostgresErasureStore(pg),
    maintenance: new PostgresMaintenanceStore(pg),
    exchange: new PostgresExchangeStore(pg),
    vectorRows: new PostgresVectorStore(pg),
    close: async () => {
      if (closed) return;
      closed = true;
      await pg.close();
    },
  };
  return store;
}

/** the driver's reason, stripped of our own wrapping ("PostgreSQL at … is unavailable: ") and of the password */
function reasonOf(err: unknown, url: string): string {
  const password = URL.canParse(url) ? decodeURIComponent(new URL(url).password) : '';
  const reason = driverReason(err);
  return password ? reason.split(password).join('***') : reason;
}

function driverReason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause ?? err;
  const e = cause as { message?: string; code?: string; errors?: Array<{ message?: string }> };
  // a host name resolving to several addresses fails with an AggregateError whose own message is empty
  const message = e.message || e.errors?.map((x) => x.message).join('; ') || String(cause);
  return e.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
