import type { MemoryEntry } from '../../domain/entry.js';
import { fingerprintOf, type ArchiveRun, type ArchiveStore, type RunOutcome, type RunTrigger, type SessionContents, type SessionRef } from '../../ports/archive-store.js';
import type { Postgres, Tx } from './pool.js';
import { bulkInsert, ENTRY_COLUMNS, entrySelect, likePrefix, rowToEntry, rowToTurn, turnSelect } from './rows.js';

type Reader = Pick<Tx, 'query'>;

/** the session's pinned ids, in the turn log or the long-term store ($1 user, $2 session) */
const PROTECTED = `(SELECT id FROM turns WHERE user_id = $1 AND session_id = $2 AND pinned
                    UNION SELECT id FROM entries WHERE user_id = $1 AND session_id = $2 AND pinned)`;
const RUN_COLUMNS = 'seq, run_id, trigger, outcome, dry_run, cutoff, sessions, replaced, error, pid, started_at, finished_at';

/**
 * The archive store on PostgreSQL, shared by every worker on every host. The replacement of a session
 * is one transaction that first takes a transaction-level advisory lock on the session (two archive
 * jobs of one session run one after the other) and re-reads it with its rows locked FOR UPDATE, so an
 * edit or delete either committed before (the fingerprint differs: nothing is replaced) or waits and
 * then finds the rows gone. A turn appended meanwhile is not among the rows removed: it stays.
 */
export class PostgresArchiveStore implements ArchiveStore {
  constructor(private readonly pg: Postgres) {}

  async candidates(cutoff: string, userId?: string): Promise<SessionRef[]> {
    return this.pg.query<SessionRef>(
      `WITH activity AS (
         SELECT user_id, session_id, max(created_at) AS last_at FROM (
           SELECT user_id, session_id, created_at FROM turns WHERE $2::text IS NULL OR user_id = $2
           UNION ALL SELECT user_id, session_id, created_at FROM entries WHERE $2::text IS NULL OR user_id = $2
         ) s GROUP BY user_id, session_id
       )
       SELECT a.user_id, a.session_id, a.last_at FROM activity a
       WHERE a.last_at < $1::timestamptz AND (
         EXISTS (SELECT 1 FROM turns t WHERE t.user_id = a.user_id AND t.session_id = a.session_id AND NOT t.pinned)
         OR EXISTS (SELECT 1 FROM entries e WHERE e.user_id = a.user_id AND e.session_id = a.session_id AND NOT e.pinned
                      AND e.kind IN ('turn', 'summary')))
       ORDER BY a.user_id COLLATE "C", a.session_id COLLATE "C"`,
      [cutoff, userId ?? null],
    );
  }

  async contents(ref: SessionRef, previousId: string): Promise<SessionContents> {
    return this.read(this.pg, ref, previousId, false);
  }

  /** One session's contents; `lock`: its rows FOR UPDATE (inside `replace`). */
  private async read(db: Reader, ref: SessionRef, previousId: string, lock: boolean): Promise<SessionContents> {
    const key = [ref.user_id, ref.session_id];
    const forUpdate = lock ? ' FOR UPDATE' : '';
    const [turns, entries, pinned, prev, last] = await Promise.all([
      db.query(`SELECT ${turnSelect()} FROM turns WHERE user_id = $1 AND session_id = $2 AND id NOT IN ${PROTECTED} ORDER BY created_at, seq${forUpdate}`, key),
      db.query(
        `SELECT ${entrySelect()} FROM entries WHERE user_id = $1 AND session_id = $2 AND kind IN ('turn', 'summary')
           AND id NOT IN ${PROTECTED} ORDER BY created_at, seq${forUpdate}`,
        key,
      ),
      db.query<{ id: string }>(`SELECT id FROM ${PROTECTED} p ORDER BY id COLLATE "C"`, key),
      db.query(`SELECT ${entrySelect()} FROM entries WHERE user_id = $1 AND id = $2${forUpdate}`, [ref.user_id, previousId]),
      db.query<{ last_at: string | null }>(
        `SELECT max(created_at) AS last_at FROM (
           SELECT created_at FROM turns WHERE user_id = $1 AND session_id = $2
           UNION ALL SELECT created_at FROM entries WHERE user_id = $1 AND session_id = $2) s`,
        key,
      ),
    ]);
    const prevEntry = prev[0] ? rowToEntry(prev[0]) : null;
    const contents = {
      ref: { ...ref, last_at: last[0]?.last_at ?? ref.last_at },
      turns: turns.map(rowToTurn),
      entries: entries.map(rowToEntry),
      previous: prevEntry && prevEntry.session_id === ref.session_id && prevEntry.kind === 'archive' ? prevEntry : null,
      pinned: pinned.map((r) => r.id),
    };
    return { ...contents, fingerprint: fingerprintOf(contents) };
  }

  async replace(expected: SessionContents, archive: MemoryEntry, cutoff: string): Promise<{ archive: MemoryEntry; removed: string[] } | null> {
    const user = expected.ref.user_id;
    return this.pg.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`archive\u001f${user}\u001f${expected.ref.session_id}`]);
      // a pool connection runs one statement at a time: the reads of `read` queue on it in order
      const now = await this.read(tx, expected.ref, archive.id, true);
      if (now.fingerprint !== expected.fingerprint || !(now.ref.last_at < cutoff)) return null;
      const ids = [...expected.entries.map((e) => e.id), ...(expected.previous ? [expected.previous.id] : [])];
      const gone = await tx.query<{ id: string }>('DELETE FROM entries WHERE user_id = $1 AND id = ANY($2::text[]) RETURNING id', [user, ids]);
      const turnsGone = await tx.query<{ id: string }>('DELETE FROM turns WHERE user_id = $1 AND id = ANY($2::text[]) RETURNING id', [
        user,
        expected.turns.map((t) => t.id),
      ]);
      const removed = new Set<string>();
      // the earlier archive is replaced, not removed: its vector is overwritten by the new one's
      for (const r of gone) if (r.id !== expected.previous?.id) removed.add(r.id);
      for (const r of turnsGone) removed.add(r.id);
      const insert = bulkInsert('entries', ENTRY_COLUMNS, [archive]);
      await tx.query(insert.sql, insert.values);
      const queued = [...removed].filter((id) => id !== archive.id);
      if (queued.length > 0) {
        await tx.query(
          `INSERT INTO vector_deletes (user_id, id, queued_at) SELECT $1, id, $3 FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING`,
          [user, queued, Date.now()],
        );
      }
      return { archive, removed: [...removed] };
    });
  }

  async pendingVectorDeletes(limit: number): Promise<Array<{ user_id: string; id: string; live: boolean }>> {
    return this.pg.query(
      `SELECT v.user_id, v.id, (EXISTS (SELECT 1 FROM turns t WHERE t.user_id = v.user_id AND t.id = v.id)
                 OR EXISTS (SELECT 1 FROM entries e WHERE e.user_id = v.user_id AND e.id = v.id)) AS live
       FROM vector_deletes v ORDER BY v.queued_at, v.user_id COLLATE "C", v.id COLLATE "C" LIMIT $1`,
      [limit],
    );
  }

  async vectorDeletesDone(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<void> {
    if (refs.length === 0) return;
    await this.pg.run(
      'DELETE FROM vector_deletes v USING unnest($1::text[], $2::text[]) AS k(user_id, id) WHERE v.user_id = k.user_id AND v.id = k.id',
      [refs.map((r) => r.user_id), refs.map((r) => r.id)],
    );
  }

  async vectorDeletesPending(): Promise<number> {
    const [r] = await this.pg.query<{ n: number }>('SELECT count(*) AS n FROM vector_deletes');
    return r!.n;
  }

  async *archives(batch = 500): AsyncGenerator<MemoryEntry[]> {
    let after = 0;
    for (;;) {
      const rows = await this.pg.query(`SELECT ${entrySelect()}, seq FROM entries WHERE kind = 'archive' AND seq > $1 ORDER BY seq LIMIT $2`, [after, batch]);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.seq as number;
      yield rows.map(rowToEntry);
    }
  }

  /**
   * A scheduled occurrence that already completed is recorded as a `duplicate`. Two workers starting
   * the same occurrence at once meet at a transaction-level advisory lock on the run id, so the second
   * sees the first's row.
   */
  async startRun(run: { run_id: string; trigger: RunTrigger; dry_run: boolean; cutoff: string }): Promise<{ seq: number; duplicate: boolean }> {
    return this.pg.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`archive-run\u001f${run.run_id}`]);
      const done = run.trigger === 'schedule' && (await tx.query("SELECT 1 FROM archive_runs WHERE run_id = $1 AND outcome = 'done' LIMIT 1", [run.run_id])).length > 0;
      const now = new Date().toISOString();
      const [row] = await tx.query<{ seq: number }>(
        `INSERT INTO archive_runs (run_id, trigger, outcome, dry_run, cutoff, pid, started_at, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq`,
        [run.run_id, run.trigger, done ? 'duplicate' : 'running', run.dry_run, run.cutoff, process.pid, now, done ? now : null],
      );
      return { seq: row!.seq, duplicate: done };
    });
  }

  async finishRun(seq: number, r: { outcome: Exclude<RunOutcome, 'running'>; sessions: number; replaced: number; error?: string }): Promise<void> {
    await this.pg.run('UPDATE archive_runs SET outcome = $2, sessions = $3, replaced = $4, error = $5, finished_at = $6 WHERE seq = $1', [
      seq,
      r.outcome,
      r.sessions,
      r.replaced,
      r.error ?? null,
      new Date().toISOString(),
    ]);
  }

  async lastRuns(limit = 1): Promise<ArchiveRun[]> {
    return this.pg.query<ArchiveRun>(`SELECT ${RUN_COLUMNS} FROM archive_runs ORDER BY seq DESC LIMIT $1`, [limit]);
  }

  async runsOf(prefix: string): Promise<ArchiveRun[]> {
    return this.pg.query<ArchiveRun>(`SELECT ${RUN_COLUMNS} FROM archive_runs WHERE run_id LIKE $1 ORDER BY seq`, [likePrefix(prefix)]);
  }
}
