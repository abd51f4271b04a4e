import { KINDS, type Kind } from '../../domain/entry.js';
import type { ErasedRows, ErasureListener, ErasureScope, ErasureSignal, ErasureStore, SignalAction } from '../../ports/erasure.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { inSteps, STEP_MS } from './steps.js';

/**
 * Tables erased by name below; the sweep covers any other table with a user_id column. `erasures`
 * holds the signals to the other processes (a user id for a few minutes, no text). `entry_sizes` holds
 * a row per entry, deleted with it by its trigger: swept, it was read whole for nothing (it has no
 * index by user or session: 100k rows, 62 ms of every session's erasure).
 */
const KNOWN_TABLES = new Set(['turns', 'entries', 'entry_sizes', 'vectors', 'vector_deletes', 'archive_runs', 'erasures', 'erasure_listeners']);
/** how long an erasure signal stays for the other processes to see it */
const SIGNAL_TTL_MS = 5 * 60_000;

function scopeWhere(scope: ErasureScope): string {
  if (scope.kind === 'all') return '';
  return scope.kind === 'user' ? 'WHERE user_id = @user_id' : 'WHERE user_id = @user_id AND session_id = @session_id';
}

function scopeParams(scope: ErasureScope): Record<string, string> {
  if (scope.kind === 'all') return {};
  return scope.kind === 'user' ? { user_id: scope.userId } : { user_id: scope.userId, session_id: scope.sessionId };
}

/**
 * Entries one statement of an erasure deletes (see inSteps: an entry costs FTS5's secure-delete
 * 0.5–25 ms). A row a statement, the longest turn of the event loop during an erasure was 19.5 ms (a
 * user of 1,400 replies of 500 characters) and 33 ms (90 of 32,000), against 0.8 s in one statement;
 * 8 rows a statement gave turns of 160 ms with long rows, and statements of up to 8 KB of text, a
 * transaction each, turns of 60–96 ms.
 */
const ENTRIES_PER_STATEMENT = 1;
/** a turn-log row has no text index to update (~2 µs a row) */
const TURNS_PER_STATEMENT = 256;

/** how long a delete's scrub of the WAL waits for a reader to let go of it (the event loop waits as long) */
const LOG_SCRUB_WAIT_MS = 20;

/** attempts of an erasure's checkpoint (`scrub`) that met another checkpoint, SCRUB_RETRY_MS apart */
const SCRUB_TRIES = 5;
const SCRUB_RETRY_MS = 20;

/**
 * Erasure on the shared SQLite file. Every connection of this service has `secure_delete` on (see
 * openDatabase), and `eraseRows` makes sure of it for its own transactions, so freed bytes are zeroed;
 * `scrub` checkpoints and truncates the write-ahead log, so erased rows' old page images leave the disk.
 */
export class SqliteErasureStore implements ErasureStore {
  private readonly s;
  /** an erasure's delete statements, by table and scope kind */
  private readonly steps = new Map<string, Statement>();
  private readonly stepMs: number;

  /** `stepMs`: how long each transaction of an erasure deletes (default STEP_MS; 0: one statement each) */
  constructor(
    private readonly db: Db,
    options: { stepMs?: number } = {},
  ) {
    this.stepMs = options.stepMs ?? STEP_MS;
    this.s = {
      // a session by its own statement: in an `@session_id IS NULL OR …` SQLite cannot narrow the
      // session's index, and a UNION merges in id order, which only the (user_id, id) index gives: both
      // read every row of the user (100k: 376 ms for a session of 27 turns). The Set below dedupes
      idsOfUser: db.prepare('SELECT id FROM turns WHERE user_id = ? UNION ALL SELECT id FROM entries WHERE user_id = ?').pluck(),
      idsOfSession: db.prepare('SELECT id FROM turns WHERE user_id = ? AND session_id = ? UNION ALL SELECT id FROM entries WHERE user_id = ? AND session_id = ?').pluck(),
      expire: db.prepare('DELETE FROM erasures WHERE at < ?'),
      signal: db.prepare('INSERT INTO erasures (user_id, session_id, instance, at, action) VALUES (?, ?, ?, ?, ?)'),
      head: db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM erasures'),
      since: db.prepare('SELECT seq, user_id, session_id, instance, action FROM erasures WHERE seq > ? ORDER BY seq'),
      listeners: db.prepare('SELECT instance, seen_seq, heartbeat_at FROM erasure_listeners WHERE instance != ? ORDER BY instance'),
      beat: db.prepare(
        'INSERT INTO erasure_listeners (instance, seen_seq, heartbeat_at) VALUES (?, ?, ?) ON CONFLICT (instance) DO UPDATE SET seen_seq = excluded.seen_seq, heartbeat_at = excluded.heartbeat_at',
      ),
      leave: db.prepare('DELETE FROM erasure_listeners WHERE instance = ?'),
      leaveStale: db.prepare('DELETE FROM erasure_listeners WHERE instance = ? AND heartbeat_at = ?'),
      tables: db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"),
      columns: db.prepare('SELECT name FROM pragma_table_info(?)'),
    };
  }

  async idsIn(scope: ErasureScope): Promise<Set<string>> {
    if (scope.kind === 'all') return new Set();
    const ids = scope.kind === 'session' ? this.s.idsOfSession.all(scope.userId, scope.sessionId, scope.userId, scope.sessionId) : this.s.idsOfUser.all(scope.userId, scope.userId);
    return new Set(ids as string[]);
  }

  async eraseRows(scope: ErasureScope): Promise<ErasedRows> {
    const out: ErasedRows = { long_term: { turn: 0, summary: 0, archive: 0 }, turn_log: 0, other_rows: {} };
    const previous = this.db.pragma('secure_delete', { simple: true }) as number;
    this.db.pragma('secure_delete = ON');
    try {
      await inSteps(this.db, () => this.eraseSome(scope, out), this.stepMs);
    } finally {
      this.db.pragma(`secure_delete = ${previous}`);
    }
    return out;
  }

  /**
   * One statement's worth of the erasure: the turn log's rows first, TURNS_PER_STATEMENT at a time (a
   * turn gone from it is persisted again by nothing: no job and no reconciler finds it), then an entry,
   * and once neither is left any other table's rows. False once nothing in scope is left.
   */
  private eraseSome(scope: ErasureScope, out: ErasedRows): boolean {
    const params = scopeParams(scope);
    const turns = this.stepOf('turns', scope).run({ ...params, rows: TURNS_PER_STATEMENT }).changes;
    out.turn_log += turns;
    if (turns > 0) return true;
    const kinds = this.stepOf('entries', scope).all({ ...params, rows: ENTRIES_PER_STATEMENT }) as Array<{ kind: Kind }>;
    for (const k of kinds) if (KINDS.includes(k.kind)) out.long_term[k.kind]++;
    if (kinds.length > 0) return true;
    const where = scopeWhere(scope);
    if (scope.kind === 'all') this.db.prepare('DELETE FROM vector_deletes').run();
    for (const table of this.userTables(scope)) {
      const n = this.db.prepare(`DELETE FROM "${table}" ${where}`).run(params).changes;
      if (n > 0) out.other_rows[table] = (out.other_rows[table] ?? 0) + n;
    }
    return false;
  }

  /** the statement deleting up to `rows` of the scope's rows of `table` (entries: returning each one's kind) */
  private stepOf(table: 'turns' | 'entries', scope: ErasureScope): Statement {
    const key = `${table} ${scope.kind}`;
    let st = this.steps.get(key);
    if (!st) {
      const returning = table === 'entries' ? ' RETURNING kind' : '';
      st = this.db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} ${scopeWhere(scope)} LIMIT @rows)${returning}`);
      this.steps.set(key, st);
    }
    return st;
  }

  /**
   * Other tables holding a user's rows (beside the ones erased by name): any ordinary table with a
   * `user_id` column, and for a session or everything, also a `session_id` column — so a table another
   * part of the service adds later is erased too. The vectors table goes through the vector index.
   */
  private userTables(scope: ErasureScope): string[] {
    const out: string[] = [];
    for (const { name } of this.s.tables.all() as Array<{ name: string }>) {
      if (KNOWN_TABLES.has(name) || name.startsWith('entries_fts')) continue;
      let columns: string[];
      try {
        columns = (this.s.columns.all(name) as Array<{ name: string }>).map((c) => c.name);
      } catch {
        continue; // a virtual table of a module this connection has not loaded
      }
      if (!columns.includes('user_id')) continue;
      if (scope.kind !== 'user' && !columns.includes('session_id')) continue;
      out.push(name);
    }
    return out;
  }

  async vacuum(): Promise<void> {
    // VACUUM may number an entry's rows anew: what connections keep of matched rows is dropped first
    // (src/adapters/sqlite/match-records.ts)
    this.db.exec('UPDATE entry_changes SET n = n + 1 WHERE id = 1; VACUUM');
  }

  async scrub(): Promise<{ complete: boolean }> {
    // a checkpoint meeting another one (another process's connection to the file checkpointing
    // its commits: a worker's, the CLI's) is refused at once rather than waited for: asked again a
    // moment later
    for (let tries = 1; ; tries++) {
      const r = this.checkpoint();
      if (r.complete || tries === SCRUB_TRIES) return r;
      await new Promise((resolve) => setTimeout(resolve, SCRUB_RETRY_MS));
    }
  }

  async scrubLog(): Promise<{ complete: boolean }> {
    // the checkpoint waits for readers through the busy handler, on this thread: briefly here. The
    // connection's timeout is put back before anything else can run on it: with an `await` between
    // (as it was), the statements of other requests resumed in that microtask gap ran with the 20 ms
    // wait and answered 503 busy under contention (issue 26; test/unit/adapters/sqlite/scrub-log.test.ts)
    const previous = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma(`busy_timeout = ${LOG_SCRUB_WAIT_MS}`);
    try {
      return this.checkpoint();
    } finally {
      this.db.pragma(`busy_timeout = ${previous}`);
    }
  }

  private checkpoint(): { complete: boolean } {
    const [r] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return { complete: !r || r.busy === 0 };
  }

  async signal(scope: ErasureScope, instance: string, at: number, action: SignalAction = 'erase'): Promise<number> {
    this.s.expire.run(at - SIGNAL_TTL_MS);
    const info = this.s.signal.run(scope.kind === 'all' ? null : scope.userId, scope.kind === 'session' ? scope.sessionId : null, instance, at, action);
    return Number(info.lastInsertRowid);
  }

  async latestSignal(): Promise<number> {
    return (this.s.head.get() as { seq: number }).seq;
  }

  async signalsAfter(seq: number): Promise<ErasureSignal[]> {
    const rows = this.s.since.all(seq) as Array<{ seq: number; user_id: string | null; session_id: string | null; instance: string; action: SignalAction }>;
    return rows.map((r) => ({
      seq: r.seq,
      instance: r.instance,
      action: r.action,
      scope: r.user_id === null ? { kind: 'all' } : r.session_id === null ? { kind: 'user', userId: r.user_id } : { kind: 'session', userId: r.user_id, sessionId: r.session_id },
    }));
  }

  async listeners(exceptInstance: string): Promise<ErasureListener[]> {
    return this.s.listeners.all(exceptInstance) as ErasureListener[];
  }

  async heartbeat(instance: string, seenSeq: number, at: number): Promise<void> {
    this.s.beat.run(instance, seenSeq, at);
  }

  async leave(instance: string, heartbeatAt?: number): Promise<void> {
    if (heartbeatAt === undefined) this.s.leave.run(instance);
    else this.s.leaveStale.run(instance, heartbeatAt);
  }
}
