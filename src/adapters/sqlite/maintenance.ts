import { accessSync, constants, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { SessionStats, UserSummary } from '../../domain/inspection.js';
import type { DuplicateGroup, Found, InspectedTurn, MaintenanceStore, StoreReport, UserScope } from '../../ports/maintenance.js';
import type { Db } from './db.js';
import { isBusy } from './errors.js';
import { MIGRATIONS } from './migrations.js';
import { EntryRepeats } from './repeats.js';
import { rowToTurn, TURN_COLUMNS, type TurnRow } from './rows/turns.js';
import { openRowids } from './turn-log.js';
import { room, SLICE_MS } from '../../pace.js';

const SAMPLE = 5;
const PROBE_BUSY_MS = 1000;

/**
 * The inspector's counts (GET /inspect/users, /inspect/sessions) are read a page of groups at a time —
 * users, or a user's sessions, GROUP_PAGE of them in key order — in the process's slices (src/pace.ts).
 * One statement over every row held the event loop as long as they all took: 100k turns of one user,
 * 49–77 ms for the users, 40–44 for the user's sessions. A page costs the rows of its groups.
 */
export const GROUP_PAGE = 100;

/**
 * The rows (turns and entries) one statement of users' counts reads at most, as the users' sizes say
 * (~4 ms). A user holding more is counted a page of its sessions at a time: a page of users holding
 * one of 100k turns was one statement of ~100 ms (GET /inspect/users, `/health` waiting as long).
 */
export const USER_ROWS_PAGE = 5000;

/** the rows user `@u` holds in each table, each counted up to `@cap` */
const USER_ROWS = `SELECT (SELECT count(*) FROM (SELECT 1 FROM turns WHERE user_id = @u LIMIT @cap))
  + (SELECT count(*) FROM (SELECT 1 FROM entries WHERE user_id = @u LIMIT @cap))`;

/** the first `@page` users after `@after` that hold a turn or an entry, in order (each table's index) */
const USER_KEYS = `
  SELECT user_id FROM (SELECT user_id FROM turns WHERE user_id > @after GROUP BY user_id ORDER BY user_id LIMIT @page)
  UNION SELECT user_id FROM (SELECT user_id FROM entries WHERE user_id > @after GROUP BY user_id ORDER BY user_id LIMIT @page)
  ORDER BY 1 LIMIT @page`;

/** the counts of the users named in `@keys` (a JSON array) that hold something */
const USER_STATS = `
  WITH k AS (SELECT value AS user_id FROM json_each(@keys)),
       t AS (SELECT user_id, count(*) AS turns, max(created_at) AS last FROM turns WHERE user_id IN k GROUP BY user_id),
       e AS (SELECT user_id, count(*) AS entries, max(created_at) AS last FROM entries WHERE user_id IN k GROUP BY user_id),
       s AS (SELECT user_id, count(*) AS sessions FROM (SELECT user_id, session_id FROM turns WHERE user_id IN k UNION SELECT user_id, session_id FROM entries WHERE user_id IN k) GROUP BY user_id)
  SELECT k.user_id, coalesce(s.sessions, 0) AS sessions, coalesce(t.turns, 0) AS turns, coalesce(e.entries, 0) AS entries,
         CASE WHEN t.last IS NULL THEN e.last WHEN e.last IS NULL THEN t.last ELSE max(t.last, e.last) END AS last_at
  FROM k LEFT JOIN t ON t.user_id = k.user_id LEFT JOIN e ON e.user_id = k.user_id LEFT JOIN s ON s.user_id = k.user_id
  WHERE t.user_id IS NOT NULL OR e.user_id IS NOT NULL`;

/** the first `@page` sessions of user `@u` after `@after`, in order */
const SESSION_KEYS = `
  SELECT session_id FROM (SELECT session_id FROM turns WHERE user_id = @u AND session_id > @after GROUP BY session_id ORDER BY session_id LIMIT @page)
  UNION SELECT session_id FROM (SELECT session_id FROM entries INDEXED BY entries_user_session WHERE user_id = @u AND session_id > @after GROUP BY session_id ORDER BY session_id LIMIT @page)
  ORDER BY 1 LIMIT @page`;

/** the counts of user `@u`'s sessions named in `@keys` */
const SESSION_STATS = `
  SELECT session_id, sum(turns) AS turns, sum(entries) AS entries, min(first_at) AS first_at, max(last_at) AS last_at FROM (
    SELECT session_id, count(*) AS turns, 0 AS entries, min(created_at) AS first_at, max(created_at) AS last_at FROM turns
      WHERE user_id = @u AND session_id IN (SELECT value FROM json_each(@keys)) GROUP BY session_id
    UNION ALL
    SELECT session_id, 0, count(*), min(created_at), max(created_at) FROM entries INDEXED BY entries_user_session
      WHERE user_id = @u AND session_id IN (SELECT value FROM json_each(@keys)) GROUP BY session_id
  ) GROUP BY session_id`;

/**
 * The best `limit` of every group's counts by `before`, read a page of GROUP_PAGE groups at a time:
 * `keys(after)` names the next page's groups after the last one read ('' at first), `stats(keys)`
 * counts them. Between pages, room for requests once the process's slice has run `stepMs` (src/pace.ts).
 */
async function bestOfPages<T>(keys: (after: string) => string[], stats: (keys: string[]) => T[] | Promise<T[]>, before: (a: T, b: T) => number, limit: number, stepMs: number): Promise<T[]> {
  let best: T[] = [];
  for (let after = ''; ; ) {
    const page = keys(after);
    if (page.length === 0) return best;
    best = [...best, ...(await stats(page))].sort(before).slice(0, limit);
    if (page.length < GROUP_PAGE) return best;
    after = page[page.length - 1]!;
    await room(stepMs);
  }
}

/** as SQLite orders ids and ISO times (plain comparison, not the locale's order); a null first */
const byText = (a: string | null, b: string | null): number => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
const newestUser = (a: UserSummary, b: UserSummary) => byText(b.last_at, a.last_at) || byText(a.user_id, b.user_id);
const newestSession = (a: SessionStats, b: SessionStats) => byText(b.last_at, a.last_at) || byText(a.session_id, b.session_id);

/**
 * Doctor, health and the inspector over the SQLite file: its description, the counts, and the
 * integrity checks over the turn log, long-term entries and embedded vectors — what a delete that
 * raced a job, or a build before ids were scoped, may have left. Read-only but for the two repairs;
 * the others go through the tiers' own ports (src/memory/integrity.ts).
 */
export class SqliteMaintenanceStore implements MaintenanceStore {
  constructor(
    private readonly db: Db,
    /** the file's path as configured (`:memory:` for an in-memory database) */
    private readonly path: string,
    /** how long the inspector's counts read before they make room for requests (src/pace.ts, room) (default SLICE_MS; 0: a page each) */
    private readonly stepMs = SLICE_MS,
  ) {}

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async freeSpace(): Promise<{ path: string; bytes: number } | null> {
    if (this.path === ':memory:') return null;
    const absolute = resolve(this.path);
    const fs = statfsSync(dirname(absolute));
    return { path: absolute, bytes: fs.bavail * fs.bsize };
  }

  async describe(): Promise<StoreReport> {
    const db = this.db;
    const absolute = this.path === ':memory:' ? this.path : resolve(this.path);
    const size = (p: string) => {
      try {
        return statSync(p).size;
      } catch {
        return 0;
      }
    };
    const report: StoreReport = {
      kind: 'sqlite',
      path: absolute,
      bytes: size(absolute),
      wal_bytes: size(`${absolute}-wal`),
      journal_mode: String(db.pragma('journal_mode', { simple: true })),
      schema_version: db.pragma('user_version', { simple: true }) as number,
      latest_version: MIGRATIONS[MIGRATIONS.length - 1]!.version,
      writable: false,
      rows: { turns: 0, entries: {}, vectors: 0 },
    };
    report.rows.turns = (db.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
    for (const r of db.prepare('SELECT kind, count(*) AS n FROM entries GROUP BY kind').all() as Array<{ kind: string; n: number }>) report.rows.entries[r.kind] = r.n;
    // memories with a vector, as turns and entries count memories: a long turn's passages are not more of them
    report.rows.vectors = (db.prepare('SELECT count(*) AS n FROM vectors WHERE part = 0').get() as { n: number }).n;

    try {
      if (absolute !== ':memory:') {
        accessSync(absolute, constants.W_OK);
        // WAL needs to create -wal and -shm files beside the database
        accessSync(dirname(absolute), constants.W_OK);
      }
      // the real test: take the write lock and give it back, without waiting long for another writer
      const busy = db.pragma('busy_timeout', { simple: true }) as number;
      db.pragma(`busy_timeout = ${PROBE_BUSY_MS}`);
      try {
        db.prepare('BEGIN IMMEDIATE').run();
        db.prepare('ROLLBACK').run();
      } finally {
        db.pragma(`busy_timeout = ${busy}`);
      }
      report.writable = true;
    } catch (err) {
      report.problem = isBusy(err) ? 'another process held the write lock for over a second (busy, not necessarily read-only)' : (err as Error).message;
    }
    if (report.schema_version > report.latest_version) {
      report.problem = `the file's schema version ${report.schema_version} is newer than this build's ${report.latest_version}`;
    }
    return report;
  }

  async users(scope: UserScope, limit: number): Promise<UserSummary[]> {
    const keys = this.db.prepare(USER_KEYS).pluck();
    const stats = this.db.prepare(USER_STATS);
    // a scoped listing's users, in pages of the same size
    const named = scope.all ? null : [...new Set(scope.users)].sort();
    const next = (after: string): string[] => (named ? named.filter((u) => u > after).slice(0, GROUP_PAGE) : (keys.all({ after, page: GROUP_PAGE }) as string[]));
    const rowsOf = this.db.prepare(USER_ROWS).pluck();
    // a page's users in statements of USER_ROWS_PAGE rows at most; a user holding more, by its sessions
    const counted = async (page: string[]): Promise<UserSummary[]> => {
      const out: UserSummary[] = [];
      let batch: string[] = [];
      let rows = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        out.push(...(stats.all({ keys: JSON.stringify(batch) }) as UserSummary[]));
        [batch, rows] = [[], 0];
        await room(this.stepMs);
      };
      for (const userId of page) {
        const n = rowsOf.get({ u: userId, cap: USER_ROWS_PAGE }) as number;
        if (n >= USER_ROWS_PAGE) {
          const big = await this.userBySessions(userId);
          if (big) out.push(big);
          continue;
        }
        if (rows + n > USER_ROWS_PAGE) await flush();
        batch.push(userId);
        rows += n;
      }
      await flush();
      return out;
    };
    return bestOfPages(next, counted, newestUser, limit, this.stepMs);
  }

  /** a user's counts, summed over its sessions' a page at a time (see USER_ROWS_PAGE); null when it holds nothing */
  private async userBySessions(userId: string): Promise<UserSummary | null> {
    const keys = this.db.prepare(SESSION_KEYS).pluck();
    const stats = this.db.prepare(SESSION_STATS);
    const sum: UserSummary = { user_id: userId, sessions: 0, turns: 0, entries: 0, last_at: null };
    for (let after = ''; ; ) {
      const page = keys.all({ u: userId, after, page: GROUP_PAGE }) as string[];
      for (const s of stats.all({ u: userId, keys: JSON.stringify(page) }) as SessionStats[]) {
        sum.sessions++;
        sum.turns += s.turns;
        sum.entries += s.entries;
        if (byText(s.last_at, sum.last_at) > 0) sum.last_at = s.last_at;
      }
      if (page.length < GROUP_PAGE) return sum.sessions > 0 ? sum : null;
      after = page[page.length - 1]!;
      await room(this.stepMs);
    }
  }

  async sessions(userId: string, limit: number): Promise<SessionStats[]> {
    const keys = this.db.prepare(SESSION_KEYS).pluck();
    const stats = this.db.prepare(SESSION_STATS);
    return bestOfPages(
      (after) => keys.all({ u: userId, after, page: GROUP_PAGE }) as string[],
      (page) => stats.all({ u: userId, keys: JSON.stringify(page) }) as SessionStats[],
      newestSession,
      limit,
      this.stepMs,
    );
  }

  async sessionTurns(userId: string, sessionId: string, limit: number): Promise<InspectedTurn[]> {
    const rows = this.db
      .prepare(
        `SELECT ${TURN_COLUMNS}, embedded_with, persisted_at FROM turns
         WHERE user_id = ? AND session_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      )
      .all(userId, sessionId, limit) as Array<TurnRow & { embedded_with: string | null; persisted_at: number | null }>;
    return rows.map((r) => ({ turn: rowToTurn(r), pending: { embed: r.embedded_with === null, persist: r.persisted_at === null } }));
  }

  /** long-term entries of kind turn whose turn-log row is gone (written after a delete) */
  async orphanEntries(): Promise<Found[]> {
    return this.db
      .prepare(
        `SELECT e.user_id, e.id, e.session_id FROM entries e
         WHERE e.kind = 'turn' AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.user_id = e.user_id AND t.id = e.id)
         ORDER BY e.rowid`,
      )
      .all() as Found[];
  }

  /**
   * embedded-index vectors of memories that are gone: no turn-log row, and no long-term entry but a
   * turn's (an entry of kind turn without its turn is an orphan too)
   */
  async orphanVectors(): Promise<Found[]> {
    return this.db
      .prepare(
        `SELECT DISTINCT v.user_id, v.id, v.session_id FROM vectors v
         WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.user_id = v.user_id AND t.id = v.id)
           AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.user_id = v.user_id AND e.id = v.id AND e.kind <> 'turn')`,
      )
      .all() as Found[];
  }

  /** entries of kind turn whose text is not their turn's (an edit that reached one tier only) */
  async staleEntries(): Promise<Found[]> {
    return this.db
      .prepare(
        `SELECT e.user_id, e.id, e.session_id FROM entries e JOIN turns t ON t.user_id = e.user_id AND t.id = e.id
         WHERE e.kind = 'turn' AND e.content_hash <> t.content_hash ORDER BY e.rowid`,
      )
      .all() as Found[];
  }

  /** vectors whose text is not their memory's now */
  async staleVectors(): Promise<Found[]> {
    return this.db
      .prepare(
        `SELECT DISTINCT v.user_id, v.id, v.session_id FROM vectors v
         LEFT JOIN turns t ON t.user_id = v.user_id AND t.id = v.id
         LEFT JOIN entries e ON e.user_id = v.user_id AND e.id = v.id
         WHERE coalesce(t.content_hash, e.content_hash) IS NOT NULL AND v.content_hash <> coalesce(t.content_hash, e.content_hash)`,
      )
      .all() as Found[];
  }

  /** turns accepted before `acceptedBefore` whose embed or persist job has not completed */
  async unfinished(acceptedBefore: number): Promise<Found[]> {
    return this.db
      .prepare(`SELECT user_id, id, session_id FROM turns WHERE rowid IN (${openRowids('any')}) ORDER BY rowid`)
      .all({ before: acceptedBefore - 1, after: 0 }) as Found[];
  }

  /** groups of entries of one user with equal text under different ids (kept by design; listed for the operator) */
  async duplicateContent(limit = 100): Promise<{ groups: number; sample: DuplicateGroup[] }> {
    const groups = (this.db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM entries GROUP BY user_id, content_hash HAVING count(*) > 1)').get() as { n: number }).n;
    const rows = this.db
      .prepare(
        `SELECT user_id, content_hash, json_group_array(id) AS ids FROM entries
         GROUP BY user_id, content_hash HAVING count(*) > 1 ORDER BY user_id, content_hash LIMIT ?`,
      )
      .all(Math.min(limit, SAMPLE)) as Array<{ user_id: string; content_hash: string; ids: string }>;
    return { groups, sample: rows.map((r) => ({ user_id: r.user_id, content_hash: r.content_hash, ids: JSON.parse(r.ids) as string[] })) };
  }

  /** whether the user holds the memory in the turn log or the long-term store */
  async live(userId: string, id: string): Promise<boolean> {
    return (
      this.db
        .prepare('SELECT 1 FROM turns WHERE user_id = ? AND id = ? UNION ALL SELECT 1 FROM entries WHERE user_id = ? AND id = ? LIMIT 1')
        .get(userId, id, userId, id) !== undefined
    );
  }

  /** An entry of kind turn takes its turn's text again; the turn is marked for re-embedding. */
  async realign(userId: string, id: string): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE entries SET (content, content_hash, updated_at) =
             (SELECT t.content, t.content_hash, ? FROM turns t WHERE t.user_id = entries.user_id AND t.id = entries.id)
           WHERE user_id = ? AND id = ? AND kind = 'turn'`,
        )
        .run(new Date().toISOString(), userId, id);
      new EntryRepeats(this.db).rewritten(userId, id);
      this.db.prepare('UPDATE turns SET embedded_with = NULL WHERE user_id = ? AND id = ?').run(userId, id);
    })();
  }

  /** A memory whose vector was removed (stale) is embedded again by the reconciler. */
  async markUnembedded(userId: string, id: string): Promise<void> {
    this.db.prepare('UPDATE turns SET embedded_with = NULL WHERE user_id = ? AND id = ?').run(userId, id);
  }
}
