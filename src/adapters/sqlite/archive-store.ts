import type { MemoryEntry } from '../../domain/entry.js';
import { fingerprintOf, type ArchiveRun, type ArchiveStore, type RunOutcome, type RunTrigger, type SessionContents, type SessionRef } from '../../ports/archive-store.js';
import { giveTurn } from '../../pace.js';
import type { Db } from './db.js';
import { EntryRepeats } from './repeats.js';
import { eachInSteps, STEP_MS } from './steps.js';
import { ARCHIVE_RUN_COLUMNS, rowToRun, type ArchiveRunRow } from './rows/archive-runs.js';
import { ENTRY_COLUMNS, ENTRY_VALUES, entryParams, rowToEntry, type EntryRow } from './rows/entries.js';
import { rowToTurn, TURN_COLUMNS, type TurnRow } from './rows/turns.js';
const PROTECTED = `(SELECT id FROM turns WHERE user_id = @user_id AND session_id = @session_id AND pinned = 1
                    UNION SELECT id FROM entries WHERE user_id = @user_id AND session_id = @session_id AND pinned = 1)`;

/** sessions of each table read at a time by `candidates` */
const GROUPS_PAGE = 500;

const groupsAfter = (table: 'turns' | 'entries') =>
  `SELECT user_id, session_id, max(created_at) AS last_at FROM ${table} WHERE (user_id, session_id) > (@user_id, @session_id)
   GROUP BY user_id, session_id ORDER BY user_id, session_id LIMIT @limit`;

/** SQLite's order of text (BINARY: UTF-8 bytes, which JS's UTF-16 comparison differs from past U+FFFF), user first */
function inIndexOrder(a: Pick<SessionRef, 'user_id' | 'session_id'>, b: Pick<SessionRef, 'user_id' | 'session_id'>): number {
  return Buffer.compare(Buffer.from(a.user_id), Buffer.from(b.user_id)) || Buffer.compare(Buffer.from(a.session_id), Buffer.from(b.session_id));
}

/** each session of the pages once, with its latest time in either table, in index order */
function latestOf(pages: ReadonlyArray<readonly SessionRef[]>): SessionRef[] {
  const byKey = new Map<string, SessionRef>();
  for (const page of pages) {
    for (const ref of page) {
      const key = `${ref.user_id}\u0000${ref.session_id}`;
      const held = byKey.get(key);
      if (!held || ref.last_at > held.last_at) byKey.set(key, ref);
    }
  }
  return [...byKey.values()].sort(inIndexOrder);
}

/**
 * The archive store on the shared SQLite file (archive jobs run on the host that holds it). Statements
 * are prepared once. The replacement of a session begins with an IMMEDIATE transaction that re-reads
 * the session first, so a turn arriving while the summary was being written aborts it (see replace).
 */
export class SqliteArchiveStore implements ArchiveStore {
  private readonly s;

  private readonly repeats: EntryRepeats;

  private readonly stepMs: number;

  /** `stepMs`: how long each transaction removing a session's entries runs (default STEP_MS; 0: a row each) */
  constructor(
    private readonly db: Db,
    options: { stepMs?: number } = {},
  ) {
    this.stepMs = options.stepMs ?? STEP_MS;
    this.repeats = new EntryRepeats(db);
    this.s = {
      // a page of (user, session) groups after a cursor, from the table's (user_id, session_id,
      // created_at) index in its order: a range of the index, no sort, stopped at the page's end
      turnGroups: db.prepare(groupsAfter('turns')),
      entryGroups: db.prepare(groupsAfter('entries')),
      archivable: db.prepare(
        `SELECT EXISTS (SELECT 1 FROM turns WHERE user_id = @user_id AND session_id = @session_id AND pinned = 0)
           OR EXISTS (SELECT 1 FROM entries WHERE user_id = @user_id AND session_id = @session_id AND pinned = 0 AND kind IN ('turn', 'summary'))`,
      ).pluck(),
      lastAt: db.prepare(
        `SELECT max(created_at) AS last_at FROM (
           SELECT created_at FROM turns WHERE user_id = @user_id AND session_id = @session_id
           UNION ALL SELECT created_at FROM entries WHERE user_id = @user_id AND session_id = @session_id)`,
      ),
      turns: db.prepare(
        `SELECT ${TURN_COLUMNS} FROM turns WHERE user_id = @user_id AND session_id = @session_id
           AND id NOT IN ${PROTECTED} ORDER BY created_at, rowid`,
      ),
      entries: db.prepare(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = @user_id AND session_id = @session_id
           AND kind IN ('turn', 'summary') AND id NOT IN ${PROTECTED} ORDER BY created_at, rowid`,
      ),
      pinned: db.prepare(`SELECT id FROM ${PROTECTED} ORDER BY id`),
      entry: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND id = ?`),
      deleteEntry: db.prepare('DELETE FROM entries WHERE user_id = ? AND id = ?'),
      deleteTurn: db.prepare('DELETE FROM turns WHERE user_id = ? AND id = ?'),
      deleteUnchanged: db.prepare(
        'DELETE FROM entries WHERE user_id = @user_id AND id = @id AND pinned = 0 AND content_hash = @content_hash AND updated_at = @updated_at',
      ),
      insertEntry: db.prepare(
        `INSERT INTO entries (${ENTRY_COLUMNS}) VALUES (${ENTRY_VALUES})`,
      ),
      queueVectorDelete: db.prepare('INSERT OR IGNORE INTO vector_deletes (user_id, id, queued_at) VALUES (?, ?, ?)'),
      pendingVectorDeletes: db.prepare(
        `SELECT v.user_id, v.id, (EXISTS (SELECT 1 FROM turns t WHERE t.user_id = v.user_id AND t.id = v.id)
                   OR EXISTS (SELECT 1 FROM entries e WHERE e.user_id = v.user_id AND e.id = v.id)) AS live
         FROM vector_deletes v ORDER BY v.queued_at, v.user_id, v.id LIMIT ?`,
      ),
      doneVectorDelete: db.prepare('DELETE FROM vector_deletes WHERE user_id = ? AND id = ?'),
      countVectorDeletes: db.prepare('SELECT count(*) AS n FROM vector_deletes'),
      archivesAfter: db.prepare(`SELECT ${ENTRY_COLUMNS}, rowid FROM entries WHERE kind = 'archive' AND rowid > ? ORDER BY rowid LIMIT ?`),
      finishedRun: db.prepare(`SELECT seq FROM archive_runs WHERE run_id = ? AND outcome = 'done' LIMIT 1`),
      insertRun: db.prepare(
        `INSERT INTO archive_runs (run_id, trigger, outcome, dry_run, cutoff, pid, started_at, finished_at)
         VALUES (@run_id, @trigger, @outcome, @dry_run, @cutoff, @pid, @started_at, @finished_at)`,
      ),
      finishRun: db.prepare(
        `UPDATE archive_runs SET outcome = @outcome, sessions = @sessions, replaced = @replaced, error = @error, finished_at = @finished_at
         WHERE seq = @seq`,
      ),
      lastRuns: db.prepare(`SELECT ${ARCHIVE_RUN_COLUMNS} FROM archive_runs ORDER BY seq DESC LIMIT ?`),
      runsOf: db.prepare(`SELECT ${ARCHIVE_RUN_COLUMNS} FROM archive_runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY seq`),
    };
  }

  /**
   * Sessions whose last turn is older than `cutoff` and that still hold something to archive, by user
   * and session. Each table's sessions are read GROUPS_PAGE at a time and merged, the event loop given
   * a turn between pages: one statement over both tables held it 105 ms on 100k turns with nothing to
   * archive, 180–310 ms with 11k sessions old enough.
   */
  async candidates(cutoff: string, userId?: string): Promise<SessionRef[]> {
    const out: SessionRef[] = [];
    // ids are never empty: (user, '') comes before every session of the user
    let after = { user_id: userId ?? '', session_id: '' };
    for (;;) {
      const page = { ...after, limit: GROUPS_PAGE };
      const pages = [this.s.turnGroups.all(page) as SessionRef[], this.s.entryGroups.all(page) as SessionRef[]];
      // past the end of a full page, the other table's sessions may be missing from it: the next page's
      const until = pages.filter((p) => p.length === GROUPS_PAGE).map((p) => p.at(-1)!).sort(inIndexOrder)[0];
      for (const ref of latestOf(pages)) {
        if (until && inIndexOrder(ref, until) > 0) break;
        if (userId !== undefined && ref.user_id !== userId) return out;
        if (ref.last_at < cutoff && this.s.archivable.get({ user_id: ref.user_id, session_id: ref.session_id })) out.push(ref);
      }
      if (!until) return out;
      after = { user_id: until.user_id, session_id: until.session_id };
      await giveTurn();
    }
  }

  async contents(ref: SessionRef, previousId: string): Promise<SessionContents> {
    return this.contentsSync(ref, previousId);
  }

  private contentsSync(ref: SessionRef, previousId: string): SessionContents {
    const key = { user_id: ref.user_id, session_id: ref.session_id };
    const turns = (this.s.turns.all(key) as TurnRow[]).map(rowToTurn);
    const entries = (this.s.entries.all(key) as EntryRow[]).map(rowToEntry);
    const pinned = (this.s.pinned.all(key) as Array<{ id: string }>).map((r) => r.id);
    const prevRow = this.s.entry.get(ref.user_id, previousId) as EntryRow | undefined;
    const previous = prevRow && prevRow.session_id === ref.session_id && prevRow.kind === 'archive' ? rowToEntry(prevRow) : null;
    const lastAt = (this.s.lastAt.get(key) as { last_at: string | null }).last_at ?? ref.last_at;
    const contents = { ref: { ...ref, last_at: lastAt }, turns, entries, previous, pinned };
    return { ...contents, fingerprint: fingerprintOf(contents) };
  }

  /**
   * Replaces what `expected` holds with `archive`. One IMMEDIATE transaction re-reads the session and
   * gives up (null, nothing changed) when it changed; else it writes the archive and removes the
   * unpinned turn-log rows and the earlier archive. The entries the archive replaces then go a row a
   * statement in steps (inSteps), each only while it is as it was read (not pinned or edited since):
   * an entry leaves the text index under FTS5's secure-delete, 0.5–25 ms a row, and a session of
   * thousands of turns held the process for seconds in one transaction. Until the last step a read
   * may find the archive beside some of the turns it replaces; a process stopped midway leaves them to
   * the next run, which folds them into the archive again. Each removed id's vector delete is queued
   * in the transaction that removes it.
   */
  async replace(expected: SessionContents, archive: MemoryEntry, cutoff: string): Promise<{ archive: MemoryEntry; removed: string[] } | null> {
    const user = expected.ref.user_id;
    const removed = new Set<string>();
    const gone = (id: string) => {
      if (removed.has(id) || id === archive.id) return;
      removed.add(id);
      this.s.queueVectorDelete.run(user, id, Date.now());
    };
    const begun = this.db
      .transaction(() => {
        const now = this.contentsSync(expected.ref, archive.id);
        if (now.fingerprint !== expected.fingerprint || !(now.ref.last_at < cutoff)) return false;
        for (const t of expected.turns) if (this.s.deleteTurn.run(user, t.id).changes > 0) gone(t.id);
        if (expected.previous) this.s.deleteEntry.run(user, expected.previous.id);
        const info = this.s.insertEntry.run(entryParams(archive));
        this.repeats.inserted(info.lastInsertRowid, archive.content, archive.name);
        return true;
      })
      .immediate();
    if (!begun) return null;
    // newest first
    await eachInSteps(
      this.db,
      [...expected.entries].reverse(),
      (e) => {
        if (this.s.deleteUnchanged.run({ user_id: user, id: e.id, content_hash: e.content_hash, updated_at: e.updated_at }).changes > 0) gone(e.id);
      },
      this.stepMs,
    );
    return { archive, removed: [...removed] };
  }

  /** Ids whose vectors are still to be deleted; `live` ones were written again since and must be kept. */
  async pendingVectorDeletes(limit: number): Promise<Array<{ user_id: string; id: string; live: boolean }>> {
    return (this.s.pendingVectorDeletes.all(limit) as Array<{ user_id: string; id: string; live: number }>).map((r) => ({ user_id: r.user_id, id: r.id, live: r.live === 1 }));
  }

  async vectorDeletesDone(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<void> {
    this.db.transaction(() => refs.forEach((r) => this.s.doneVectorDelete.run(r.user_id, r.id)))();
  }

  async vectorDeletesPending(): Promise<number> {
    return (this.s.countVectorDeletes.get() as { n: number }).n;
  }

  /** Pages through every archive entry (the sweep that re-enqueues archives missing a vector). */
  async *archives(batch = 500): AsyncGenerator<MemoryEntry[]> {
    let after = 0;
    for (;;) {
      const rows = this.s.archivesAfter.all(after, batch) as Array<EntryRow & { rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map(rowToEntry);
    }
  }

  /**
   * Records the start of a run. A scheduled occurrence that already completed is recorded as a
   * `duplicate` and must not run again (BullMQ runs each occurrence once; this guards retries of a
   * job whose completion was not acknowledged).
   */
  async startRun(run: { run_id: string; trigger: RunTrigger; dry_run: boolean; cutoff: string }): Promise<{ seq: number; duplicate: boolean }> {
    return this.db
      .transaction(() => {
        const duplicate = run.trigger === 'schedule' && this.s.finishedRun.get(run.run_id) !== undefined;
        const now = new Date().toISOString();
        const info = this.s.insertRun.run({
          ...run,
          dry_run: run.dry_run ? 1 : 0,
          outcome: duplicate ? 'duplicate' : 'running',
          pid: process.pid,
          started_at: now,
          finished_at: duplicate ? now : null,
        });
        return { seq: Number(info.lastInsertRowid), duplicate };
      })
      .immediate();
  }

  async finishRun(seq: number, r: { outcome: Exclude<RunOutcome, 'running'>; sessions: number; replaced: number; error?: string }): Promise<void> {
    this.s.finishRun.run({ seq, outcome: r.outcome, sessions: r.sessions, replaced: r.replaced, error: r.error ?? null, finished_at: new Date().toISOString() });
  }

  async lastRuns(limit = 1): Promise<ArchiveRun[]> {
    return (this.s.lastRuns.all(limit) as ArchiveRunRow[]).map(rowToRun);
  }

  /** Runs whose id starts with `prefix` (tests and inspection of one scheduler's occurrences). */
  async runsOf(prefix: string): Promise<ArchiveRun[]> {
    const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return (this.s.runsOf.all(like) as ArchiveRunRow[]).map(rowToRun);
  }
}
