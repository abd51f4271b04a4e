import { KINDS, type Kind } from '../../domain/entry.js';
import type { ErasedRows, ErasureListener, ErasureScope, ErasureSignal, ErasureStore, SignalAction } from '../../ports/erasure.js';
import type { Postgres, Tx } from './pool.js';

/**
 * Tables erased by name below, or holding no text of a user: the sweep covers any other table with a
 * user_id column. `vector_changes` holds ids only, and the other processes need its delete records to
 * drop the erased vectors from memory; it is pruned on its own (see EmbeddedVectorIndex).
 * `entry_changes` holds user ids and transaction ids only, and the other processes need the row the
 * erasure itself writes to drop their statistics of the user; the long-term store prunes it.
 */
const KNOWN_TABLES = new Set(['turns', 'entries', 'vectors', 'vector_changes', 'entry_changes', 'vector_deletes', 'archive_runs', 'erasures', 'erasure_listeners', 'schema_migrations']);
/** the tables that hold a user's text: what `scrub` vacuums and `vacuum` rewrites */
const TEXT_TABLES = ['turns', 'entries', 'vectors'];
/** how long an erasure signal stays for the other processes to see it */
const SIGNAL_TTL_MS = 5 * 60_000;

function scopeWhere(scope: ErasureScope): { sql: string; params: string[] } {
  if (scope.kind === 'all') return { sql: '', params: [] };
  if (scope.kind === 'user') return { sql: 'WHERE user_id = $1', params: [scope.userId] };
  return { sql: 'WHERE user_id = $1 AND session_id = $2', params: [scope.userId, scope.sessionId] };
}

/**
 * Erasure on PostgreSQL. A DELETE leaves the row's old version (a dead tuple) in the table's pages
 * until VACUUM removes it, and the text in the write-ahead log until its segments are recycled: so
 * `scrub` runs VACUUM on the tables that hold text, after which no version of an erased row is left
 * in a live table — unless a transaction that started before the erasure still runs (it may still
 * see the rows; VACUUM keeps them for it): then `complete` is false and the next erasure or
 * `forget --vacuum` finishes the job. `vacuum` is VACUUM FULL: the tables and their indexes
 * (the full-text index keeps lexemes of deleted rows otherwise) are rewritten into new files. What a
 * DBA must do about the WAL, its archive and backups: docs/postgresql.md.
 */
export class PostgresErasureStore implements ErasureStore {
  /** the transaction id of this process's last erasure: `scrub` checks no older snapshot remains */
  private lastErasure: string | null = null;

  constructor(private readonly pg: Postgres) {}

  async idsIn(scope: ErasureScope): Promise<Set<string>> {
    if (scope.kind === 'all') return new Set();
    const rows = await this.pg.query<{ id: string }>(
      `SELECT id FROM turns WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2)
       UNION SELECT id FROM entries WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2)`,
      [scope.userId, scope.kind === 'session' ? scope.sessionId : null],
    );
    return new Set(rows.map((r) => r.id));
  }

  async eraseRows(scope: ErasureScope): Promise<ErasedRows> {
    const out: ErasedRows = { long_term: { turn: 0, summary: 0, archive: 0 }, turn_log: 0, other_rows: {} };
    const { sql: where, params } = scopeWhere(scope);
    await this.pg.tx(async (tx) => {
      const kinds = await tx.query<{ kind: Kind }>(`DELETE FROM entries ${where} RETURNING kind`, params);
      for (const k of kinds) if (KINDS.includes(k.kind)) out.long_term[k.kind]++;
      out.turn_log += await tx.run(`DELETE FROM turns ${where}`, params);
      if (scope.kind === 'all') await tx.run('DELETE FROM vector_deletes');
      for (const table of await userTables(tx, scope)) {
        const n = await tx.run(`DELETE FROM ${quoteIdent(table)} ${where}`, params);
        if (n > 0) out.other_rows[table] = (out.other_rows[table] ?? 0) + n;
      }
      const [x] = await tx.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
      this.lastErasure = x!.xid;
    });
    return out;
  }

  /** VACUUM FULL of the tables holding text: new files without the erased rows' bytes; takes their exclusive lock while it runs. */
  async vacuum(): Promise<void> {
    await this.unbounded(`VACUUM FULL ${TEXT_TABLES.join(', ')}`);
  }

  /**
   * VACUUM of the tables holding text (and their TOAST tables and indexes): the erased rows' dead
   * versions go. Incomplete while another session holds a snapshot older than this process's last
   * erasure: VACUUM must keep what that snapshot may still read.
   */
  async scrub(): Promise<{ complete: boolean }> {
    await this.unbounded(`VACUUM ${TEXT_TABLES.join(', ')}`);
    if (this.lastErasure === null) return { complete: true };
    const [r] = await this.pg.query<{ n: number }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()
         AND backend_xmin IS NOT NULL AND age(backend_xmin) >= age(xid($1::xid8))`,
      [this.lastErasure],
    );
    return { complete: r!.n === 0 };
  }

  async signal(scope: ErasureScope, instance: string, at: number, action: SignalAction = 'erase'): Promise<number> {
    return this.pg.tx(async (tx) => {
      await tx.run('DELETE FROM erasures WHERE at < $1', [at - SIGNAL_TTL_MS]);
      const [r] = await tx.query<{ seq: number }>('INSERT INTO erasures (user_id, session_id, instance, at, action) VALUES ($1, $2, $3, $4, $5) RETURNING seq', [
        scope.kind === 'all' ? null : scope.userId,
        scope.kind === 'session' ? scope.sessionId : null,
        instance,
        at,
        action,
      ]);
      return r!.seq;
    });
  }

  async latestSignal(): Promise<number> {
    const [r] = await this.pg.query<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM erasures');
    return r!.seq;
  }

  async signalsAfter(seq: number): Promise<ErasureSignal[]> {
    const rows = await this.pg.query<{ seq: number; user_id: string | null; session_id: string | null; instance: string; action: SignalAction }>(
      'SELECT seq, user_id, session_id, instance, action FROM erasures WHERE seq > $1 ORDER BY seq',
      [seq],
    );
    return rows.map((r) => ({
      seq: r.seq,
      instance: r.instance,
      action: r.action,
      scope: r.user_id === null ? { kind: 'all' } : r.session_id === null ? { kind: 'user', userId: r.user_id } : { kind: 'session', userId: r.user_id, sessionId: r.session_id },
    }));
  }

  async listeners(exceptInstance: string): Promise<ErasureListener[]> {
    return this.pg.query<ErasureListener>('SELECT instance, seen_seq, heartbeat_at FROM erasure_listeners WHERE instance <> $1 ORDER BY instance', [exceptInstance]);
  }

  async heartbeat(instance: string, seenSeq: number, at: number): Promise<void> {
    await this.pg.run(
      `INSERT INTO erasure_listeners (instance, seen_seq, heartbeat_at) VALUES ($1, $2, $3)
       ON CONFLICT (instance) DO UPDATE SET seen_seq = excluded.seen_seq, heartbeat_at = excluded.heartbeat_at`,
      [instance, seenSeq, at],
    );
  }

  async leave(instance: string, heartbeatAt?: number): Promise<void> {
    await this.pg.run('DELETE FROM erasure_listeners WHERE instance = $1 AND ($2::int8 IS NULL OR heartbeat_at = $2)', [instance, heartbeatAt ?? null]);
  }

  /** nothing after a delete, prune or edit: a VACUUM per call would cost more than it is worth; autovacuum, the next scrub and the DBA handle dead tuples and the WAL (docs/erasure.md) */
  async scrubLog(): Promise<{ complete: boolean }> {
    return { complete: true };
  }

  /** a maintenance statement that may outrun the statement timeout of ordinary ones */
  private unbounded(sql: string): Promise<void> {
    return this.pg.session(async (c) => {
      await c.query('SET statement_timeout = 0');
      try {
        await c.query(sql);
      } finally {
        await c.query('RESET statement_timeout').catch(() => {});
      }
    });
  }
}

/**
 * Other tables of this schema holding a user's rows: any ordinary table with a `user_id` column, and
 * for a session or everything, also a `session_id` column — so a table added later is erased too.
 */
async function userTables(tx: Tx, scope: ErasureScope): Promise<string[]> {
  const rows = await tx.query<{ table_name: string; cols: string[] }>(
    `SELECT c.table_name, array_agg(c.column_name::text) AS cols FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema = current_schema() AND c.column_name IN ('user_id', 'session_id')
     GROUP BY c.table_name ORDER BY c.table_name`,
  );
  return rows
    .filter((r) => !KNOWN_TABLES.has(r.table_name) && r.cols.includes('user_id') && (scope.kind === 'user' || r.cols.includes('session_id')))
    .map((r) => r.table_name);
}

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
