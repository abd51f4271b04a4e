import type { Db } from './db.js';

/** A memory a check found, named by its owner and id (and session, for its short-term copy). */
export interface Found {
  user_id: string;
  id: string;
  session_id: string;
}

/** Entries of one user holding the same text under different ids. */
export interface DuplicateGroup {
  user_id: string;
  content_hash: string;
  ids: string[];
}

const SAMPLE = 5;

/**
 * The integrity checks of `doctor` over the SQLite file (turn log, long-term entries, embedded
 * vectors): what a delete that raced a job, or a build before ids were scoped, may have left.
 * Read-only; the repairs go through the tiers' own interfaces (src/memory/integrity.ts).
 */
export class SqliteIntegrity {
  constructor(private readonly db: Db) {}

  /** long-term entries of kind turn whose turn-log row is gone (written after a delete) */
  orphanEntries(): Found[] {
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
  orphanVectors(): Found[] {
    return this.db
      .prepare(
        `SELECT DISTINCT v.user_id, v.id, v.session_id FROM vectors v
         WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.user_id = v.user_id AND t.id = v.id)
           AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.user_id = v.user_id AND e.id = v.id AND e.kind <> 'turn')`,
      )
      .all() as Found[];
  }

  /** entries of kind turn whose text is not their turn's (an edit that reached one tier only) */
  staleEntries(): Found[] {
    return this.db
      .prepare(
        `SELECT e.user_id, e.id, e.session_id FROM entries e JOIN turns t ON t.user_id = e.user_id AND t.id = e.id
         WHERE e.kind = 'turn' AND e.content_hash <> t.content_hash ORDER BY e.rowid`,
      )
      .all() as Found[];
  }

  /** vectors whose text is not their memory's now */
  staleVectors(): Found[] {
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
  unfinished(acceptedBefore: number): Found[] {
    return this.db
      .prepare(
        `SELECT user_id, id, session_id FROM turns
         WHERE (embedded_with IS NULL OR persisted_at IS NULL) AND accepted_at < ? ORDER BY rowid`,
      )
      .all(acceptedBefore) as Found[];
  }

  /** groups of entries of one user with equal text under different ids (kept by design; listed for the operator) */
  duplicateContent(limit = 100): { groups: number; sample: DuplicateGroup[] } {
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
  live(userId: string, id: string): boolean {
    return (
      this.db
        .prepare('SELECT 1 FROM turns WHERE user_id = ? AND id = ? UNION ALL SELECT 1 FROM entries WHERE user_id = ? AND id = ? LIMIT 1')
        .get(userId, id, userId, id) !== undefined
    );
  }

  /** every user with a turn or an entry (whose short-term sessions the check reads) */
  users(): string[] {
    return (this.db.prepare('SELECT user_id FROM turns UNION SELECT user_id FROM entries ORDER BY 1').all() as Array<{ user_id: string }>).map((r) => r.user_id);
  }

  /** An entry of kind turn takes its turn's text again; the turn is marked for re-embedding. */
  realign(userId: string, id: string): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE entries SET (content, content_hash, updated_at) =
             (SELECT t.content, t.content_hash, ? FROM turns t WHERE t.user_id = entries.user_id AND t.id = entries.id)
           WHERE user_id = ? AND id = ? AND kind = 'turn'`,
        )
        .run(new Date().toISOString(), userId, id);
      this.db.prepare('UPDATE turns SET embedded_with = NULL WHERE user_id = ? AND id = ?').run(userId, id);
    })();
  }

  /** A memory whose vector was removed (stale) is embedded again by the reconciler. */
  markUnembedded(userId: string, id: string): void {
    this.db.prepare('UPDATE turns SET embedded_with = NULL WHERE user_id = ? AND id = ?').run(userId, id);
  }
}
