import pg from 'pg';
import { BackendUnavailableError, NeuralCleaveError } from '../../errors.js';

export interface PostgresOptions {
  /** `postgres://user[:password]@host[:port]/database[?sslmode=…]` */
  url: string;
  /** connections at most (default 10): every process on every host opens its own pool */
  max?: number;
  /** a statement running longer is cancelled by the server (default 30 s) */
  statementTimeoutMs?: number;
  /** giving up on a connection, and waiting for a free one in the pool (default 5 s) */
  connectTimeoutMs?: number;
  /** an idle connection is closed after this long (default 30 s) */
  idleTimeoutMs?: number;
  /** shown in pg_stat_activity (default "neuralcleave") */
  applicationName?: string;
}

/** The URL with its password masked: what errors, logs and `doctor` show. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable database URL)';
  }
}

/**
 * Columns come back as this service's domain values: int8 (counts, seqs, epoch milliseconds) as
 * numbers — they stay far below 2^53 — and timestamptz as the canonical ISO string
 * (`Date#toISOString`), the form SQLite stores, so both backends hand out identical records.
 */
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (s: string) => Date;
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return Number;
    if (oid === pg.types.builtins.TIMESTAMPTZ) return (s: string) => parseTimestamptz(s).toISOString();
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** SQLSTATE classes and driver messages that mean "the database is not there right now". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-4])/; // connection exception, insufficient resources, admin/crash shutdown, cannot connect now
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|terminating connection/i;

/** True when the error says the database cannot be reached (as opposed to a bad statement or data). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof BackendUnavailableError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATE.test(e.code) || UNAVAILABLE_ERRNO.has(e.code))) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}

const ignore = (): void => {};

/** A connection checked out for one transaction. */
export interface Tx {
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]>;
  /** rows changed by the statement */
  run(text: string, values?: readonly unknown[]): Promise<number>;
}

/**
 * One pool of connections to the PostgreSQL database, and the only door to it: every statement goes
 * through `query`/`run`/`tx`, which turn "the database is gone" (refused, reset, shut down, no free
 * connection within the connect timeout) into `BackendUnavailableError` — 503 `backend_unavailable`
 * over HTTP, a retry for a job — and leave every other error as the driver raised it. A lost
 * connection is dropped from the pool; the next query opens a new one, so the service recovers by
 * itself when the database returns. Sessions run in UTC with the configured statement timeout.
 */
export class Postgres {
  readonly pool: pg.Pool;
  /** the URL without its password */
  readonly where: string;

  /** opened on the first queryUnflushed: a process that runs no job never holds its connections */
  private unflushedPool: pg.Pool | null = null;

  constructor(readonly options: PostgresOptions) {
    this.where = redactUrl(options.url);
    this.pool = this.open(options.max ?? 10, '-c TimeZone=UTC');
  }

  private open(max: number, sessionOptions: string): pg.Pool {
    const pool = new pg.Pool({
      connectionString: this.options.url,
      max,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: this.options.idleTimeoutMs ?? 30_000,
      statement_timeout: this.options.statementTimeoutMs ?? 30_000,
      application_name: this.options.applicationName ?? 'neuralcleave',
      options: sessionOptions,
      keepAlive: true,
      types: TYPES,
    });
    // an idle connection the server closed (restart, failover): dropped by the pool; without a
    // listener the 'error' event would end the process
    pool.on('error', () => {});
    return pool;
  }

  /**
   * Connections whose sessions commit without waiting for the WAL flush (synchronous_commit off for
   * the session: every statement on them is a job's write, see queryUnflushed). A quarter of `max`, at
   * least 2: the jobs' writes share statements (Coalescer), so few run at once.
   */
  private get unflushed(): pg.Pool {
    this.unflushedPool ??= this.open(Math.max(2, Math.ceil((this.options.max ?? 10) / 4)), '-c TimeZone=UTC -c synchronous_commit=off');
    return this.unflushedPool;
  }

  async query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]> {
    try {
      const r = await this.pool.query(text, values as unknown[]);
      return r.rows as R[];
    } catch (err) {
      throw this.wrap(err);
    }
  }

  async run(text: string, values?: readonly unknown[]): Promise<number> {
    try {
      return (await this.pool.query(text, values as unknown[])).rowCount ?? 0;
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /**
   * Runs `fn` in one transaction (READ COMMITTED), committed when it returns and rolled back when it
   * throws. `flush: false`: the commit returns without waiting for the WAL to reach the disk
   * (synchronous_commit off for this transaction alone) — for writes a server crash may lose without
   * harm, see `queryUnflushed`.
   */
  async tx<T>(fn: (tx: Tx) => Promise<T>, options: { flush?: boolean } = {}): Promise<T> {
    const client = await this.checkout();
    let broken = false;
    const tx: Tx = {
      query: async <R>(text: string, values?: readonly unknown[]) => (await client.query(text, values as unknown[])).rows as R[],
      run: async (text, values) => (await client.query(text, values as unknown[])).rowCount ?? 0,
    };
    try {
      await client.query(options.flush === false ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
      const out = await fn(tx);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      broken = isUnavailable(err);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw this.wrap(err);
    } finally {
      // a connection that failed mid-transaction is not handed to the next caller
      this.checkin(client, broken);
    }
  }

  /**
   * One statement committed without waiting for the WAL flush: a job's own writes and bookkeeping
   * (an entry derived from a logged turn, "embedded", "persisted"). A server crash may lose the last
   * few milliseconds of them, never a turn: the WAL is written in order, so whatever is lost is newer
   * than every commit that was flushed, the turns it derives from included, and what it leaves is a job
   * not marked done — re-enqueued by the reconciler and idempotent. One round trip, as `query`, on a
   * connection of its own small pool whose session has synchronous_commit off (a transaction of
   * BEGIN, SET LOCAL, the statement and COMMIT cost three round trips more than the fsync it saved).
   */
  async queryUnflushed<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]> {
    try {
      return (await this.unflushed.query(text, values as unknown[])).rows as R[];
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /** Holds one connection for `fn` (session-level advisory locks need the same connection throughout). */
  async session<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.checkout();
    let broken = false;
    try {
      return await fn(client);
    } catch (err) {
      broken = isUnavailable(err);
      throw this.wrap(err);
    } finally {
      this.checkin(client, broken);
    }
  }

  /**
   * A connection for the caller alone. While checked out, the pool no longer listens for its errors:
   * a connection cut under a query both rejects the query and emits 'error', which unheard would end
   * the process.
   */
  private async checkout(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
    // once per connection, kept for its life (a late 'error' may follow a release)
    if (!client.listeners('error').includes(ignore)) client.on('error', ignore);
    return client;
  }

  private checkin(client: pg.PoolClient, broken: boolean): void {
    client.release(broken ? true : undefined);
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.unflushedPool?.end()]);
  }

  private wrap(err: unknown): unknown {
    if (err instanceof NeuralCleaveError || !isUnavailable(err)) return err;
    return new BackendUnavailableError('postgres', `PostgreSQL at ${this.where} is unavailable: ${(err as Error).message}`, { cause: err });
  }
}
