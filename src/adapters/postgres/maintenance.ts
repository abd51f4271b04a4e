import type { SessionStats, UserSummary } from '../../domain/inspection.js';
import type { DuplicateGroup, Found, InspectedTurn, MaintenanceStore, StoreReport, UserScope } from '../../ports/maintenance.js';
import { LATEST_VERSION } from './migrations.js';
import type { Postgres } from './pool.js';
import { rowToTurn, turnSelect } from './rows.js';

const SAMPLE = 5;

/** per user: sessions, turns, entries and last activity ($1: the users, or NULL for every one) */
const USER_STATS = `
  WITH t AS (SELECT user_id, count(*) AS turns, max(created_at) AS last FROM turns WHERE $1::text[] IS NULL OR user_id = ANY($1) GROUP BY user_id),
       e AS (SELECT user_id, count(*) AS entries, max(created_at) AS last FROM entries WHERE $1::text[] IS NULL OR user_id = ANY($1) GROUP BY user_id),
       s AS (SELECT user_id, count(*) AS sessions FROM (
               SELECT user_id, session_id FROM turns WHERE $1::text[] IS NULL OR user_id = ANY($1)
               UNION SELECT user_id, session_id FROM entries WHERE $1::text[] IS NULL OR user_id = ANY($1)) x GROUP BY user_id)
  SELECT s.user_id, s.sessions, coalesce(t.turns, 0) AS turns, coalesce(e.entries, 0) AS entries, greatest(t.last, e.last) AS last_at
  FROM s LEFT JOIN t ON t.user_id = s.user_id LEFT JOIN e ON e.user_id = s.user_id`;

/**
 * Doctor, health and the inspector over the PostgreSQL database: its description, the counts, and
 * the integrity checks over the turn log, long-term entries and embedded vectors. Read-only but for
 * the two repairs. Ids and user ids sort bytewise (COLLATE "C"), as SQLite sorts them.
 */
export class PostgresMaintenanceStore implements MaintenanceStore {
  constructor(private readonly pg: Postgres) {}

  async ping(): Promise<void> {
    await this.pg.query('SELECT 1');
  }

  /** the database server's disks are its own: a full one answers its writes with an error, seen as backend_unavailable */
  async freeSpace(): Promise<null> {
    return null;
  }

  async describe(): Promise<StoreReport> {
    const [db] = await this.pg.query<{ bytes: number; version: number | null; read_only: string; recovery: boolean; can_write: boolean }>(
      `SELECT pg_database_size(current_database()) AS bytes, (SELECT max(version) FROM schema_migrations) AS version,
              current_setting('transaction_read_only') AS read_only, pg_is_in_recovery() AS recovery,
              has_table_privilege('turns', 'INSERT') AND has_table_privilege('entries', 'INSERT') AS can_write`,
    );
    const [counts] = await this.pg.query<{ turns: number; vectors: number; entries: Record<string, number> | null }>(
      `SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM vectors WHERE part = 0) AS vectors,
              (SELECT jsonb_object_agg(kind, n) FROM (SELECT kind, count(*) AS n FROM entries GROUP BY kind) k) AS entries`,
    );
    const report: StoreReport = {
      kind: 'postgres',
      path: this.pg.where,
      bytes: db!.bytes,
      wal_bytes: 0,
      journal_mode: 'postgres',
      schema_version: db!.version ?? 0,
      latest_version: LATEST_VERSION,
      writable: !db!.recovery && db!.read_only === 'off' && db!.can_write,
      rows: { turns: counts!.turns, entries: counts!.entries ?? {}, vectors: counts!.vectors },
    };
    if (db!.recovery) report.problem = 'the database is a read-only standby (in recovery)';
    else if (db!.read_only !== 'off') report.problem = 'the session is read-only (default_transaction_read_only)';
    else if (!db!.can_write) report.problem = 'the role may not insert into the memory tables';
    if (report.schema_version > report.latest_version) {
      report.problem = `the database's schema version ${report.schema_version} is newer than this build's ${report.latest_version}`;
    }
    return report;
  }

  async users(scope: UserScope, limit: number): Promise<UserSummary[]> {
    return this.pg.query<UserSummary>(`${USER_STATS} ORDER BY last_at DESC NULLS LAST, s.user_id COLLATE "C" LIMIT $2`, [scope.all ? null : [...scope.users], limit]);
  }

  async sessions(userId: string, limit: number): Promise<SessionStats[]> {
    return this.pg.query<SessionStats>(
      `SELECT session_id, sum(turns)::int8 AS turns, sum(entries)::int8 AS entries, min(first_at) AS first_at, max(last_at) AS last_at FROM (
         SELECT session_id, count(*) AS turns, 0 AS entries, min(created_at) AS first_at, max(created_at) AS last_at FROM turns WHERE user_id = $1 GROUP BY session_id
         UNION ALL
         SELECT session_id, 0, count(*), min(created_at), max(created_at) FROM entries WHERE user_id = $1 GROUP BY session_id
       ) x GROUP BY session_id ORDER BY last_at DESC, session_id COLLATE "C" LIMIT $2`,
      [userId, limit],
    );
  }

  async sessionTurns(userId: string, sessionId: string, limit: number): Promise<InspectedTurn[]> {
    const rows = await this.pg.query<Record<string, unknown> & { embedded_with: string | null; persisted_at: number | null }>(
      `SELECT ${turnSelect()}, embedded_with, persisted_at FROM turns WHERE user_id = $1 AND session_id = $2 ORDER BY created_at DESC, seq DESC LIMIT $3`,
      [userId, sessionId, limit],
    );
    return rows.map((r) => ({ turn: rowToTurn(r), pending: { embed: r.embedded_with === null, persist: r.persisted_at === null } }));
  }

  async orphanEntries(): Promise<Found[]> {
    return this.pg.query<Found>(
      `SELECT e.user_id, e.id, e.session_id FROM entries e
       WHERE e.kind = 'turn' AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.user_id = e.user_id AND t.id = e.id) ORDER BY e.seq`,
    );
  }

  async orphanVectors(): Promise<Found[]> {
    return this.pg.query<Found>(
      `SELECT DISTINCT v.user_id, v.id, v.session_id FROM vectors v
       WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.user_id = v.user_id AND t.id = v.id)
         AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.user_id = v.user_id AND e.id = v.id AND e.kind <> 'turn')`,
    );
  }

  async staleEntries(): Promise<Found[]> {
    return this.pg.query<Found>(
      `SELECT e.user_id, e.id, e.session_id FROM entries e JOIN turns t ON t.user_id = e.user_id AND t.id = e.id
       WHERE e.kind = 'turn' AND e.content_hash <> t.content_hash ORDER BY e.seq`,
    );
  }

  async staleVectors(): Promise<Found[]> {
    return this.pg.query<Found>(
      `SELECT DISTINCT v.user_id, v.id, v.session_id FROM vectors v
       LEFT JOIN turns t ON t.user_id = v.user_id AND t.id = v.id
       LEFT JOIN entries e ON e.user_id = v.user_id AND e.id = v.id
       WHERE coalesce(t.content_hash, e.content_hash) IS NOT NULL AND v.content_hash <> coalesce(t.content_hash, e.content_hash)`,
    );
  }

  async unfinished(acceptedBefore: number): Promise<Found[]> {
    return this.pg.query<Found>(
      'SELECT user_id, id, session_id FROM turns WHERE (embedded_with IS NULL OR persisted_at IS NULL) AND accepted_at < $1 ORDER BY seq',
      [acceptedBefore],
    );
  }

  async duplicateContent(limit = 100): Promise<{ groups: number; sample: DuplicateGroup[] }> {
    const [g] = await this.pg.query<{ n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM entries GROUP BY user_id, content_hash HAVING count(*) > 1) d');
    const sample = await this.pg.query<DuplicateGroup>(
      `SELECT user_id, content_hash, array_agg(id ORDER BY seq) AS ids FROM entries
       GROUP BY user_id, content_hash HAVING count(*) > 1 ORDER BY user_id COLLATE "C", content_hash LIMIT $1`,
      [Math.min(limit, SAMPLE)],
    );
    return { groups: g!.n, sample };
  }

  async live(userId: string, id: string): Promise<boolean> {
    const rows = await this.pg.query(
      'SELECT 1 FROM turns WHERE user_id = $1 AND id = $2 UNION ALL SELECT 1 FROM entries WHERE user_id = $1 AND id = $2 LIMIT 1',
      [userId, id],
    );
    return rows.length > 0;
  }

  async realign(userId: string, id: string): Promise<void> {
    await this.pg.tx(async (tx) => {
      await tx.run(
        `UPDATE entries e SET content = t.content, content_hash = t.content_hash, updated_at = $3
         FROM turns t WHERE t.user_id = e.user_id AND t.id = e.id AND e.user_id = $1 AND e.id = $2 AND e.kind = 'turn'`,
        [userId, id, new Date().toISOString()],
      );
      await tx.run('UPDATE turns SET embedded_with = NULL WHERE user_id = $1 AND id = $2', [userId, id]);
    });
  }

  async markUnembedded(userId: string, id: string): Promise<void> {
    await this.pg.run('UPDATE turns SET embedded_with = NULL WHERE user_id = $1 AND id = $2', [userId, id]);
  }
}
