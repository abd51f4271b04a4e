import type { Statement } from 'better-sqlite3';
import type { Turn } from '../../domain/turn.js';
import { ContentConflictError } from '../../errors.js';
import type { MemoryRef, PruneCriteria } from '../../ports/long-term.js';
import type { AppendResult, Around, PendingJob, TurnLog, TurnLogCounts, TurnVersion } from '../../ports/turn-log.js';
import { atomically, type Db } from './db.js';
import { pruneWhere } from './long-term.js';
import { eachInSteps, STEP_MS } from './steps.js';
import { TransactionBatcher } from './transaction-batcher.js';
import { underAlias } from './rows/columns.js';
import { rowToTurn, TURN_COLUMNS as COLUMNS, TURN_VALUES, turnParams, turnRowOf, type TurnRow } from './rows/turns.js';

/**
 * The rowid of the turn `offset` places from anchor `a` in its session (`cmp` '<': before it), nearest
 * first, by time and then acceptance order (a row value, so that the index's range is used); null when
 * there is none.
 */
function neighbourAt(cmp: '<' | '>', order: 'ASC' | 'DESC', offset: number): string {
  return `(SELECT b.rowid FROM turns b WHERE b.user_id = a.user_id AND b.session_id = a.session_id
    AND (b.created_at, b.rowid) ${cmp} (a.created_at, a.rowid) ORDER BY b.created_at ${order}, b.rowid ${order} LIMIT 1 OFFSET ${offset})`;
}

/** the most turns read on either side of an anchor (neighbours: one subquery each) */
const MAX_NEIGHBOURS = 16;

/**
 * The rowids of turns whose job is open, accepted at or before @before and after @after, read from
 * the partial indexes of the open jobs alone (they hold only those turns). Ordered by rowid, a page
 * was planned as a walk of the whole table by rowid, every turn's text read until the page filled: a
 * reconcile pass, every 30 s, held the event loop ~60 ms per statement on 100k real turns with
 * nothing pending.
 */
export function openRowids(job: PendingJob): string {
  const open = (index: string, column: string) => `SELECT rowid FROM turns INDEXED BY ${index} WHERE ${column} IS NULL AND accepted_at <= @before AND rowid > @after`;
  const embed = open('turns_pending_embed', 'embedded_with');
  const persist = open('turns_pending_persist', 'persisted_at');
  return job === 'embed' ? embed : job === 'persist' ? persist : `${embed} UNION ${persist}`;
}

/** a page of turns whose job is open, in acceptance order (see openRowids) */
const pendingPage = (job: PendingJob) => `SELECT ${COLUMNS}, rowid FROM turns WHERE rowid IN (SELECT rowid FROM (${openRowids(job)}) ORDER BY rowid LIMIT @limit) ORDER BY rowid`;

/** a turn read with `.raw()` */
const turnOf = (values: unknown[]): Turn => rowToTurn(turnRowOf(values));

/** A re-send is the same turn when everything the client said is the same (a missing created_at is "now" each time). */
function sameTurn(held: Pick<Turn, 'session_id' | 'role' | 'name' | 'content'>, t: Turn): boolean {
  return held.session_id === t.session_id && held.role === t.role && (held.name ?? null) === (t.name ?? null) && held.content === t.content;
}

/**
 * The turn log in the shared SQLite file: `embedded_with` and `persisted_at` record which jobs have
 * completed. Appends and the jobs' bookkeeping writes go through the transaction batcher (group
 * commits, shared with the long-term store and the embedded vector index: one writer's commits).
 * The `...Sync` forms are for other SQLite adapters writing in one transaction with other tables.
 */
export class SqliteTurnLog implements TurnLog {
  private readonly s;
  /** neighbourIds statements by how many turns they read before and after each anchor */
  private readonly neighbourIds = new Map<string, Statement>();
  private readonly stepMs: number;

  constructor(
    private readonly db: Db,
    /** batches the jobs' bookkeeping writes (see TransactionBatcher) */
    readonly writes: TransactionBatcher = new TransactionBatcher(db),
    /** `stepMs`: how long each transaction of a prune deletes (default STEP_MS; 0: a row each) */
    options: { stepMs?: number } = {},
  ) {
    this.stepMs = options.stepMs ?? STEP_MS;
    this.s = {
      held: db.prepare('SELECT session_id, role, name, content FROM turns WHERE user_id = ? AND id = ?'),
      insert: db.prepare(
        `INSERT INTO turns (${COLUMNS}, accepted_at) VALUES (${TURN_VALUES}, @accepted_at)`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM turns WHERE user_id = ? AND id = ?`).raw(),
      version: db.prepare('SELECT content_hash, session_id FROM turns WHERE user_id = ? AND id = ?').raw(),
      pendingEmbed: db.prepare(pendingPage('embed')),
      pendingPersist: db.prepare(pendingPage('persist')),
      pendingAny: db.prepare(pendingPage('any')),
      markEmbedded: db.prepare('UPDATE turns SET embedded_with = ? WHERE user_id = ? AND id = ?'),
      markPersisted: db.prepare('UPDATE turns SET persisted_at = ?, importance = coalesce(importance, ?) WHERE user_id = ? AND id = ?'),
      // each count from an index: one pass with FILTERs read every turn, text and all (/health with a
      // key and every /metrics scrape; 100k turns: 62 ms of event loop, 0.1 ms so). The pending ones
      // come from the partial indexes of the turns still waiting, which hold only those
      counts: db.prepare(
        `SELECT (SELECT count(*) FROM turns) AS total, (SELECT count(*) FROM turns WHERE embedded_with IS NULL) AS pending_embed,
           (SELECT count(*) FROM turns WHERE persisted_at IS NULL) AS pending_persist`,
      ),
      session: db.prepare(`SELECT ${COLUMNS} FROM turns WHERE user_id = ? AND session_id = ? ORDER BY created_at, rowid`),
      anyHeld: db.prepare('SELECT 1 FROM json_each(@ids) j CROSS JOIN turns a ON a.user_id = @user_id AND a.id = j.value LIMIT 1').pluck(),
      byRowids: db.prepare(`SELECT t.rowid, ${underAlias(COLUMNS, 't')} FROM json_each(?) j CROSS JOIN turns t ON t.rowid = j.value`).raw(),
      updateContent: db.prepare('UPDATE turns SET content = ?, content_hash = ?, embedded_with = NULL WHERE user_id = ? AND id = ?'),
      delete: db.prepare('DELETE FROM turns WHERE user_id = ? AND id = ?'),
      // a session by its own statement: in an `@session_id IS NULL OR …` SQLite cannot narrow the index
      deleteUser: db.prepare('DELETE FROM turns WHERE user_id = ?'),
      deleteSession: db.prepare('DELETE FROM turns WHERE user_id = ? AND session_id = ?'),
      all: db.prepare(`SELECT ${COLUMNS}, rowid FROM turns WHERE rowid > ? ORDER BY rowid LIMIT ?`),
    };
  }

  /**
   * Appends turns in one transaction: all are durable, or none is. Ids are the user's own: another
   * user's turns never meet them. An id the user already holds with the same session, role, name and
   * content is a duplicate (a retried write, stored once); with anything of that different it is a
   * ContentConflictError naming the id, and nothing of the batch is written.
   */
  appendSync(turns: readonly Turn[], acceptedAt = Date.now()): AppendResult {
    return atomically(this.db, (): AppendResult => {
        const accepted: Turn[] = [];
        const duplicates: string[] = [];
        const inBatch = new Map<string, Turn>();
        turns.forEach((t, i) => {
          const key = `${t.user_id}\u0000${t.id}`;
          const held = inBatch.get(key) ?? (this.s.held.get(t.user_id, t.id) as Pick<Turn, 'session_id' | 'role' | 'name' | 'content'> | undefined);
          if (held) {
            if (!sameTurn(held, t)) throw new ContentConflictError(t.id, i);
            duplicates.push(t.id);
            return;
          }
          inBatch.set(key, t);
          this.s.insert.run(Object.assign(turnParams(t), { accepted_at: acceptedAt }));
          accepted.push(t);
        });
        return { accepted, duplicates };
      });
  }

  /**
   * In the next group commit: the writes of concurrent requests (many clients sending one
   * turn each) share one transaction, and each resolves once that transaction has committed — a
   * turn is still acknowledged only after it is in the log. A write that fails (an id the user holds
   * with other content) fails alone: the batch is retried write by write (TransactionBatcher).
   */
  append(turns: readonly Turn[], acceptedAt = Date.now()): Promise<AppendResult> {
    return this.writes.run(() => this.appendSync(turns, acceptedAt));
  }

  async get(userId: string, id: string): Promise<Turn | null> {
    const row = this.s.get.get(userId, id) as unknown[] | undefined;
    return row ? turnOf(row) : null;
  }

  async getMany(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<Turn | null>> {
    return this.byRefs(this.s.get, refs, turnOf);
  }

  /** as getMany, two short columns a turn (1.5 µs a turn against getMany's 5: no text copied out) */
  async versions(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<TurnVersion | null>> {
    return this.byRefs(this.s.version, refs, ([content_hash, session_id]: [string, string]) => ({ content_hash, session_id }));
  }

  /**
   * `read`'s row of each ref, in one read transaction: one state of the file for the batch, and one
   * lock taken for it rather than one per statement (a statement outside a transaction takes its own:
   * 8 µs a turn against 5)
   */
  private byRefs<R, T>(read: Statement, refs: ReadonlyArray<{ user_id: string; id: string }>, of: (row: R) => T): Array<T | null> {
    return atomically(this.db, () => refs.map((r) => {
      const row = read.get(r.user_id, r.id) as R | undefined;
      return row ? of(row) : null;
    }), 'deferred');
  }

  /** Pages through turns accepted at or before `acceptedBefore` whose `job` (`any`: either job) has not completed, in acceptance order. */
  async *pending(job: PendingJob, acceptedBefore: number, batch = 1000): AsyncGenerator<Turn[]> {
    const stmt = job === 'embed' ? this.s.pendingEmbed : job === 'persist' ? this.s.pendingPersist : this.s.pendingAny;
    let after = 0;
    for (;;) {
      const rows = stmt.all({ before: acceptedBefore, after, limit: batch }) as Array<TurnRow & { rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map(rowToTurn);
    }
  }

  /** How many of these turns still have a job to run (embed counted only when `withEmbed`). */
  async unfinished(refs: ReadonlyArray<{ user_id: string; id: string }>, withEmbed: boolean): Promise<number> {
    const stmt = this.db.prepare(
      `SELECT count(*) AS n FROM turns WHERE user_id = ? AND id = ? AND (persisted_at IS NULL ${withEmbed ? 'OR embedded_with IS NULL' : ''})`,
    );
    let n = 0;
    this.db.transaction(() => {
      for (const r of refs) n += (stmt.get(r.user_id, r.id) as { n: number }).n;
    })();
    return n;
  }

  markEmbedded(userId: string, ids: readonly string[], embedderId: string): Promise<void> {
    return this.writes.run(() => this.markEmbeddedSync(userId, ids, embedderId));
  }

  markEmbeddedSync(userId: string, ids: readonly string[], embedderId: string): void {
    atomically(this.db, () => {
      for (const id of ids) this.s.markEmbedded.run(embedderId, userId, id);
    }, 'deferred');
  }

  markPersisted(userId: string, id: string, importance: number, at = Date.now()): Promise<void> {
    return this.writes.run(() => this.markPersistedSync(userId, id, importance, at));
  }

  markPersistedSync(userId: string, id: string, importance: number, at = Date.now()): void {
    this.s.markPersisted.run(at, importance, userId, id);
  }

  async counts(): Promise<TurnLogCounts> {
    return this.s.counts.get() as TurnLogCounts;
  }

  async session(userId: string, sessionId: string): Promise<Turn[]> {
    return (this.s.session.all(userId, sessionId) as TurnRow[]).map(rowToTurn);
  }

  /**
   * Every anchor's neighbours' rowids in one statement, a scalar subquery each (nearest first before
   * the anchor, then after it), their rows in a second (after a lookup of whether any anchor is held):
   * three statements a hit (its anchor, the turns before, those after) were a third of a templated
   * retrieve's CPU (8 hits: 0.61 of 2.25 ms), one statement joining the rows to each side 0.27 ms, each
   * side as a JSON array of rowids 86 µs, a subquery each 36 µs (docs/bench-report.md, round 37).
   */
  private neighbourIdsOf(before: number, after: number): Statement {
    const key = `${before} ${after}`;
    let st = this.neighbourIds.get(key);
    if (!st) {
      const sides = [
        ...Array.from({ length: before }, (_, i) => neighbourAt('<', 'DESC', i)),
        ...Array.from({ length: after }, (_, i) => neighbourAt('>', 'ASC', i)),
      ];
      st = this.db.prepare(`SELECT a.id, a.session_id, ${sides.join(', ')} FROM json_each(@ids) j CROSS JOIN turns a ON a.user_id = @user_id AND a.id = j.value`).raw();
      this.neighbourIds.set(key, st);
    }
    return st;
  }

  /** The turns just before (oldest first) and just after each of the user's turns `ids` in its session; a turn unknown has none. */
  async neighbours(userId: string, ids: readonly string[], before = 1, after = 1): Promise<Map<string, Around>> {
    for (const [name, n] of [['before', before], ['after', after]] as const) {
      if (!Number.isInteger(n) || n < 0 || n > MAX_NEIGHBOURS) throw new RangeError(`neighbours: ${name} must be an integer from 0 to ${MAX_NEIGHBOURS}, not ${n}`);
    }
    const out = new Map<string, Around>();
    if (ids.length === 0) return out;
    const held = JSON.stringify([...new Set(ids)]);
    // the statement reading both sides costs ~30 µs even when it finds no anchor (hits of entries whose
    // turns are gone from the log, as in the templated retrieve bench): the anchors are looked up first
    if (!this.s.anyHeld.get({ user_id: userId, ids: held })) return out;
    const present = (xs: unknown[]) => xs.filter((x): x is number => x !== null);
    const sides = (this.neighbourIdsOf(before, after).all({ user_id: userId, ids: held }) as unknown[][]).map((r) => ({
      id: r[0] as string,
      session: r[1] as string,
      before: present(r.slice(2, 2 + before)),
      after: present(r.slice(2 + before)),
    }));
    const wanted = sides.flatMap((s) => [...s.before, ...s.after]);
    const rows = new Map(wanted.length === 0 ? [] : (this.s.byRowids.all(JSON.stringify(wanted)) as unknown[][]).map((v) => [v[0] as number, turnRowOf(v, 1)]));
    // each row checked against its anchor's session, not read in one transaction with it (a
    // transaction cost more than the check): a turn deleted between the two statements is left out,
    // and a rowid the file gave to a new turn meanwhile names a turn of another session, or a turn
    // of this session that is now there
    const inOrder = (rowids: number[], session: string) =>
      rowids
        .flatMap((seq) => {
          const row = rows.get(seq);
          return row && row.user_id === userId && row.session_id === session ? [{ seq, row }] : [];
        })
        .sort((x, y) => (x.row.created_at < y.row.created_at ? -1 : x.row.created_at > y.row.created_at ? 1 : x.seq - y.seq))
        .map(({ row }) => rowToTurn(row));
    for (const s of sides) out.set(s.id, { before: inOrder(s.before, s.session), after: inOrder(s.after, s.session) });
    return out;
  }

  /** Pages through every turn in acceptance order (reindex, export). */
  async *scan(batch = 1000): AsyncGenerator<Turn[]> {
    let after = 0;
    for (;;) {
      const rows = this.s.all.all(after, batch) as Array<TurnRow & { rowid: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.rowid;
      yield rows.map(rowToTurn);
    }
  }

  /** An edited turn must be re-embedded: its embed state is reset. */
  async updateContent(userId: string, id: string, content: string, hash: string): Promise<boolean> {
    return this.s.updateContent.run(content, hash, userId, id).changes > 0;
  }

  async delete(userId: string, ids: readonly string[]): Promise<number> {
    let n = 0;
    this.db.transaction(() => {
      for (const id of ids) n += this.s.delete.run(userId, id).changes;
    })();
    return n;
  }

  /**
   * Deletes the unpinned turns matching a prune (see pruneWhere), except those whose long-term entry is
   * pinned; returns which. The turns matching now are listed, then deleted a row a statement in steps
   * (inSteps), each checked again as it goes, so a turn whose entry is pinned meanwhile stays: one
   * statement over a user's 1,400 real turns held the event loop ~40 ms.
   */
  async prune(criteria: PruneCriteria): Promise<MemoryRef[]> {
    const q = pruneWhere(criteria);
    if (!q) return [];
    const rowids = this.db.prepare(`SELECT rowid FROM turns WHERE ${q.where}`).pluck().all(q.params) as number[];
    const drop = this.db.prepare(
      `DELETE FROM turns WHERE rowid = @rowid_ AND ${q.where}
         AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.user_id = turns.user_id AND e.id = turns.id AND e.pinned = 1)
       RETURNING user_id, id, session_id`,
    );
    const out: MemoryRef[] = [];
    await eachInSteps(this.db, rowids, (rowid) => out.push(...(drop.all({ ...q.params, rowid_: rowid }) as MemoryRef[])), this.stepMs);
    return out;
  }

  async deleteWhere(userId: string, sessionId?: string): Promise<number> {
    return (sessionId === undefined ? this.s.deleteUser.run(userId) : this.s.deleteSession.run(userId, sessionId)).changes;
  }
}
