import type { Kind } from '../domain/entry.js';

/** What an erasure covers: one user, one session of a user, or everything. */
export type ErasureScope = { kind: 'user'; userId: string } | { kind: 'session'; userId: string; sessionId: string } | { kind: 'all' };

/** The rows an erasure removed from the durable store, by table. */
export interface ErasedRows {
  /** long-term entries by kind (turns, summaries, archives), pinned included */
  long_term: Record<Kind, number>;
  turn_log: number;
  /** rows of other tables that carried the user's id (tables added later are covered too) */
  other_rows: Record<string, number>;
}

/**
 * What a signal asks of the processes holding state of their own: `erase` everything in scope (forget,
 * clear), or `settle` their short-term copies in scope against the turn log (a delete, edit or prune:
 * the copies of turns gone or edited go, the others stay).
 */
export type SignalAction = 'erase' | 'settle';

/** An erasure run by some process, as the other processes sharing the store see it. */
export interface ErasureSignal {
  seq: number;
  scope: ErasureScope;
  action: SignalAction;
  /** the process that ran it (its instance id: host, pid and a random part) */
  instance: string;
}

/** A process holding state of its own (a short-term store or queue in its memory) that applies erasures run elsewhere. */
export interface ErasureListener {
  /** the process's instance id (host, pid and a random part: pids alone collide across hosts) */
  instance: string;
  /** the last erasure signal it has applied */
  seen_seq: number;
  heartbeat_at: number;
}

/**
 * What an erasure (forget, clear) needs of the durable store: the rows in scope removed so that their
 * text does not linger in the store's bytes, and the signals through which the other processes sharing
 * the store learn of it and confirm they applied it to their own state (see docs/architecture.md,
 * maintenance).
 *
 * Contract: `eraseRows` removes every turn-log row and long-term entry in scope (pinned included),
 * every row of any other table that carries the scope's user (and session) id, and for scope `all`
 * the outbox of vector deletes, until none is left; the turn log's rows go no later than the entries
 * (a turn still logged could be persisted again). It may take several transactions, each whole
 * (SQLite: a row a statement, a commit every ~10 ms and a pause as long; PostgreSQL: one), so a turn
 * written in scope while it runs may be erased too. The store zeroes or reclaims what it frees
 * (SQLite: `secure_delete`), and `scrub` afterwards moves what a write-ahead log still holds of them into the
 * store and truncates it — `complete: false` when it cannot now (a reader holds the log), which is not
 * an error. `idsIn` lists the ids in scope now (persist jobs name a turn by id only). Signals live a few
 * minutes; `signal` also drops expired ones. Processes are named by instance id (host, pid, random
 * part), so processes of several hosts sharing one database never share a row. A listener row whose
 * process died is dropped by the caller with `leave(instance, heartbeatAt)`, which removes it only
 * while its heartbeat is still that one.
 * Not covered: the short-term tier, the vectors and the jobs (the erasure use case erases those through
 * their own ports), and deciding whether a process is alive (the caller's business: a pid can be checked on its own host only).
 */
export interface ErasureStore {
  /** the ids of the turns and entries in scope (empty for scope `all`: it matches every job anyway) */
  idsIn(scope: ErasureScope): Promise<Set<string>>;
  eraseRows(scope: ErasureScope): Promise<ErasedRows>;
  /** rebuilds the store's files so no freed page keeps old bytes (a file written before secure delete was on) */
  vacuum(): Promise<void>;
  /** flushes and truncates the write-ahead log after an erasure; `complete: false` when a reader prevents it now */
  scrub(): Promise<{ complete: boolean }>;
  /**
   * `scrub` after a delete, prune or edit, waiting only a few milliseconds for readers (it runs in
   * the request): `complete: false` when one holds the log. PostgreSQL: nothing, its dead tuples and
   * WAL are VACUUM's and the DBA's (docs/erasure.md).
   */
  scrubLog(): Promise<{ complete: boolean }>;
  /** records an erasure (or, with `settle`, a delete, edit or prune) for the other processes; returns its seq */
  signal(scope: ErasureScope, instance: string, at: number, action?: SignalAction): Promise<number>;
  /** the newest signal's seq (0 when none) */
  latestSignal(): Promise<number>;
  /** signals after `seq`, oldest first */
  signalsAfter(seq: number): Promise<ErasureSignal[]>;
  /** every listener but `exceptInstance` */
  listeners(exceptInstance: string): Promise<ErasureListener[]>;
  /** records that `instance` is alive and has applied every signal up to `seenSeq` */
  heartbeat(instance: string, seenSeq: number, at: number): Promise<void>;
  /** removes `instance`'s listener row (only while its heartbeat is `heartbeatAt`, when given) */
  leave(instance: string, heartbeatAt?: number): Promise<void>;
}
