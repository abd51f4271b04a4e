import type { Turn } from '../../domain/turn.js';
import { ContentConflictError } from '../../errors.js';
import type { AppendResult, Around, TurnLog, TurnVersion } from '../../ports/turn-log.js';
import type { MemoryRef, PruneCriteria } from '../../ports/long-term.js';
import type { Postgres, Tx } from './pool.js';
import { Coalescer, Rejected } from './coalesce.js';
import { bulkInsert, rowToTurn, scanBySeq, turnSelect, TURN_COLUMNS } from './rows.js';


type Held = Pick<Turn, 'session_id' | 'role' | 'name' | 'content'>;

/** A re-send is the same turn when everything the client said is the same (a missing created_at is "now" each time). */
function sameTurn(held: Held, t: Turn): boolean {
  return held.session_id === t.session_id && held.role === t.role && (held.name ?? null) === (t.name ?? null) && held.content === t.content;
}

const PAGE = 1000;

/**
 * The turn log on PostgreSQL: the durable record of every accepted turn and the outbox of its jobs,
 * shared by every API and worker process on every host. A turn is appended (committed) before it is
 * acknowledged; `embedded_with` and `persisted_at` record which jobs have completed, so unfinished
 * ones are re-enqueued after any crash. `seq` orders turns by acceptance (SQLite's rowid).
 */
export class PostgresTurnLog implements TurnLog {
  /** the jobs' bookkeeping: concurrent calls share one statement (see Coalescer) */
  private readonly persisted = new Coalescer<{ user_id: string; id: string; importance: number; at: number }, void>(async (rows) => {
    await this.pg.queryUnflushed(
      `UPDATE turns t SET persisted_at = u.at, importance = coalesce(t.importance, u.importance)
       FROM unnest($1::text[], $2::text[], $3::float8[], $4::int8[]) AS u(user_id, id, importance, at) WHERE t.user_id = u.user_id AND t.id = u.id`,
      [rows.map((r) => r.user_id), rows.map((r) => r.id), rows.map((r) => r.importance), rows.map((r) => r.at)],
    );
    return rows.map(() => undefined);
  });
  private readonly embedded = new Coalescer<{ user_id: string; ids: readonly string[]; embedder: string }, void>(async (calls) => {
    const flat = calls.flatMap((c) => c.ids.map((id) => [c.user_id, id, c.embedder] as const));
    await this.pg.queryUnflushed(
      `UPDATE turns t SET embedded_with = u.embedder FROM unnest($1::text[], $2::text[], $3::text[]) AS u(user_id, id, embedder)
       WHERE t.user_id = u.user_id AND t.id = u.id`,
      [flat.map((f) => f[0]), flat.map((f) => f[1]), flat.map((f) => f[2])],
    );
    return calls.map(() => undefined);
  });

  /**
   * Concurrent appends (one per HTTP request) share one transaction: one commit, one WAL flush, three
   * round trips for all of them (one when each holds one turn: appendSingles). Each call is still all or nothing: a batch that fails (one call's
   * conflict) is retried call by call (Coalescer), so only the failing call rejects, with its own index.
   * Within a batch an id sent by two calls is accepted for the first and a duplicate for the second,
   * as two appends committed one after the other would be.
   */
  private readonly appends = new Coalescer<{ turns: readonly Turn[]; acceptedAt: number }, AppendResult>(async (calls) => {
    if (calls.every((c) => c.turns.length === 1)) return this.appendSingles(calls.map((c) => c.turns[0]!), Math.min(...calls.map((c) => c.acceptedAt)));
    if (calls.length === 1) return [await this.pg.tx((tx) => appendIn(tx, calls[0]!.turns, calls[0]!.acceptedAt))];
    const all = calls.flatMap((c) => c.turns);
    const taken = await this.pg.tx((tx) => appendRows(tx, all, Math.min(...calls.map((c) => c.acceptedAt))));
    let at = 0;
    return calls.map((c) => {
      const first = at;
      at += c.turns.length;
      const accepted = c.turns.filter((_, i) => taken.has(first + i));
      return { accepted, duplicates: c.turns.filter((_, i) => !taken.has(first + i)).map((t) => t.id) };
    });
  });

  /**
   * Calls of one turn each (the HTTP route's single-turn writes): one INSERT in its own implicit
   * transaction — one round trip, its commit flushed before it returns — instead of BEGIN, INSERT,
   * COMMIT. A call's turn is all it has, so a call never needs undoing: its row was written, or it
   * was not and the call is a duplicate or fails alone with its conflict (the held row is read by a
   * second statement, whose snapshot sees a concurrent writer's committed row the INSERT waited for).
   */
  private async appendSingles(turns: readonly Turn[], acceptedAt: number): Promise<Array<AppendResult | Rejected>> {
    const key = (t: Pick<Turn, 'user_id' | 'id'>) => `${t.user_id}\u0000${t.id}`;
    const first = new Map<string, Turn>();
    const firstAt = new Map<string, number>();
    turns.forEach((t, i) => {
      if (first.has(key(t))) return;
      first.set(key(t), t);
      firstAt.set(key(t), i);
    });
    const { sql, values } = bulkInsert('turns', [...TURN_COLUMNS, 'accepted_at'], [...first.values()].map((t) => ({ ...t, accepted_at: acceptedAt })));
    const inserted = await this.pg.query<{ user_id: string; id: string }>(`${sql} ON CONFLICT (user_id, id) DO NOTHING RETURNING user_id, id`, values);
    const written = new Set(inserted.map(key));
    const held = [...first.values()].filter((t) => !written.has(key(t)));
    const stored = new Map<string, Held>();
    if (held.length > 0) {
      const rows = await this.pg.query<Held & { user_id: string; id: string }>(
        `SELECT t.user_id, t.id, t.session_id, t.role, t.name, t.content FROM turns t
         JOIN unnest($1::text[], $2::text[]) AS k(user_id, id) ON t.user_id = k.user_id AND t.id = k.id`,
        [held.map((t) => t.user_id), held.map((t) => t.id)],
      );
      for (const r of rows) stored.set(key(r), r);
    }
    return turns.map((t, i) => {
      const k = key(t);
      if (written.has(k) && firstAt.get(k) === i) return { accepted: [t], duplicates: [] };
      // what this turn is compared with: the row stored before, or the batch's first turn of its id
      const earlier = written.has(k) ? first.get(k) : stored.get(k);
      return earlier && sameTurn(earlier, t) ? { accepted: [], duplicates: [t.id] } : new Rejected(new ContentConflictError(t.id, 0));
    });
  }

  /** concurrent reads (every persist job starts with one) share one statement too */
  private readonly reads = new Coalescer<{ user_id: string; id: string }, Turn | null>(async (keys) => {
    const rows = await this.pg.query<Record<string, unknown> & { user_id: string; id: string }>(
      `SELECT ${turnSelect('t.')} FROM turns t JOIN unnest($1::text[], $2::text[]) AS k(user_id, id) ON t.user_id = k.user_id AND t.id = k.id`,
      [keys.map((k) => k.user_id), keys.map((k) => k.id)],
    );
    const byKey = new Map(rows.map((r) => [`${r.user_id}\u0000${r.id}`, r]));
    return keys.map((k) => {
      const row = byKey.get(`${k.user_id}\u0000${k.id}`);
      return row ? rowToTurn(row) : null;
    });
  });

  constructor(private readonly pg: Postgres) {}

  /**
   * Appends turns in one transaction: all are durable, or none is. An id the user already holds with
   * the same session, role, name and content is a duplicate (stored once); with anything of that
   * different it is a ContentConflictError naming the id, and nothing of the batch is written.
   * Concurrent appends of one id (two API processes) meet at the primary key: the second waits for
   * the first to commit, then compares.
   */
  append(turns: readonly Turn[], acceptedAt = Date.now()): Promise<AppendResult> {
    if (turns.length === 0) return Promise.resolve({ accepted: [], duplicates: [] });
    return this.appends.call({ turns, acceptedAt });
  }

  get(userId: string, id: string): Promise<Turn | null> {
    return this.reads.call({ user_id: userId, id });
  }

  async getMany(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<Turn | null>> {
    return this.byRefs(turnSelect('t.'), refs, rowToTurn);
  }

  /** as getMany, without the texts */
  async versions(refs: ReadonlyArray<{ user_id: string; id: string }>): Promise<Array<TurnVersion | null>> {
    return this.byRefs('t.content_hash, t.session_id', refs, (row) => ({ content_hash: row.content_hash as string, session_id: row.session_id as string }));
  }

  /** `columns` of each ref's turn (`t`), in one statement for the batch: the refs as two arrays, joined back to their positions */
  private async byRefs<T>(columns: string, refs: ReadonlyArray<{ user_id: string; id: string }>, of: (row: Record<string, unknown>) => T): Promise<Array<T | null>> {
    if (refs.length === 0) return [];
    const rows = await this.pg.query(
      `SELECT ${columns}, r.n FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(user_id, id, n)
         JOIN turns t ON t.user_id = r.user_id AND t.id = r.id`,
      [refs.map((r) => r.user_id), refs.map((r) => r.id)],
    );
    const out: Array<T | null> = refs.map(() => null);
    for (const row of rows) out[Number(row.n) - 1] = of(row);
    return out;
  }

  /** Pages through turns accepted at or before `acceptedBefore` whose `job` (`any`: either job) has not completed, in acceptance order. */
  async *pending(job: 'embed' | 'persist' | 'any', acceptedBefore: number, batch = PAGE): AsyncGenerator<Turn[]> {
    const open = job === 'embed' ? 'embedded_with IS NULL' : job === 'persist' ? 'persisted_at IS NULL' : '(embedded_with IS NULL OR persisted_at IS NULL)';
    let after = 0;
    for (;;) {
      const rows = await this.pg.query(
        `SELECT ${turnSelect()}, seq FROM turns WHERE ${open} AND accepted_at <= $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [acceptedBefore, after, batch],
      );
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.seq as number;
      yield rows.map(rowToTurn);
    }
  }

  /** How many of these turns still have a job to run (embed counted only when `withEmbed`). */
  async unfinished(refs: ReadonlyArray<{ user_id: string; id: string }>, withEmbed: boolean): Promise<number> {
    const [row] = await this.pg.query<{ n: number }>(
      `SELECT count(*) AS n FROM turns t JOIN unnest($1::text[], $2::text[]) AS k(user_id, id) ON t.user_id = k.user_id AND t.id = k.id
       WHERE t.persisted_at IS NULL ${withEmbed ? 'OR t.embedded_with IS NULL' : ''}`,
      [refs.map((r) => r.user_id), refs.map((r) => r.id)],
    );
    return row!.n;
  }

  markEmbedded(userId: string, ids: readonly string[], embedderId: string): Promise<void> {
    return this.embedded.call({ user_id: userId, ids, embedder: embedderId });
  }

  markPersisted(userId: string, id: string, importance: number, at = Date.now()): Promise<void> {
    return this.persisted.call({ user_id: userId, id, importance, at });
  }

  async counts(): Promise<{ total: number; pending_embed: number; pending_persist: number }> {
    const [row] = await this.pg.query<{ total: number; pending_embed: number; pending_persist: number }>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE embedded_with IS NULL) AS pending_embed,
         count(*) FILTER (WHERE persisted_at IS NULL) AS pending_persist FROM turns`,
    );
    return row!;
  }

  async session(userId: string, sessionId: string): Promise<Turn[]> {
    const rows = await this.pg.query(`SELECT ${turnSelect()} FROM turns WHERE user_id = $1 AND session_id = $2 ORDER BY created_at, seq`, [userId, sessionId]);
    return rows.map(rowToTurn);
  }

  /** The turns just before (oldest first) and just after each of the user's turns `ids` in its session; a turn unknown has none. */
  async neighbours(userId: string, ids: readonly string[], before = 1, after = 1): Promise<Map<string, Around>> {
    const out = new Map<string, Around>();
    if (ids.length === 0) return out;
    // one round trip for every hit: its anchor, and each side through the (user_id, session_id,
    // created_at, seq) index; an anchor with no neighbour comes back once with no side
    const rows = await this.pg.query<Record<string, unknown> & { hit: string; side: number | null }>(
      `SELECT a.id AS hit, n.side, ${turnSelect('n.')} FROM unnest($2::text[]) AS j(id)
         JOIN turns a ON a.user_id = $1 AND a.id = j.id
         LEFT JOIN LATERAL (
           (SELECT -1 AS side, t.seq, ${turnSelect('t.')} FROM turns t
             WHERE t.user_id = a.user_id AND t.session_id = a.session_id AND (t.created_at, t.seq) < (a.created_at, a.seq)
             ORDER BY t.created_at DESC, t.seq DESC LIMIT $3)
           UNION ALL
           (SELECT 1, t.seq, ${turnSelect('t.')} FROM turns t
             WHERE t.user_id = a.user_id AND t.session_id = a.session_id AND (t.created_at, t.seq) > (a.created_at, a.seq)
             ORDER BY t.created_at, t.seq LIMIT $4)
         ) n ON true
       ORDER BY n.created_at, n.seq`,
      [userId, [...new Set(ids)], before, after],
    );
    for (const r of rows) {
      let around = out.get(r.hit);
      if (!around) out.set(r.hit, (around = { before: [], after: [] }));
      if (r.side !== null) (r.side < 0 ? around.before : around.after).push(rowToTurn(r));
    }
    return out;
  }

  /** Pages through every turn in acceptance order (reindex, export). */
  scan(batch = PAGE, userId?: string): AsyncGenerator<Turn[]> {
    return scanBySeq(this.pg, 'turns', turnSelect(), rowToTurn, batch, userId);
  }

  /** An edited turn must be re-embedded: its embed state is reset. */
  async updateContent(userId: string, id: string, content: string, hash: string): Promise<boolean> {
    return (await this.pg.run('UPDATE turns SET content = $3, content_hash = $4, embedded_with = NULL WHERE user_id = $1 AND id = $2', [userId, id, content, hash])) > 0;
  }

  async delete(userId: string, ids: readonly string[]): Promise<number> {
    return this.pg.run('DELETE FROM turns WHERE user_id = $1 AND id = ANY($2::text[])', [userId, ids]);
  }

  /**
   * Deletes the unpinned turns matching a prune (one user's, or every user's), except those whose
   * long-term entry is pinned; returns which. No criterion deletes nothing.
   */
  async prune(c: PruneCriteria): Promise<MemoryRef[]> {
    if (c.olderThanDays === undefined && c.belowImportance === undefined && c.sessionId === undefined) return [];
    return this.pg.query<MemoryRef>(
      `DELETE FROM turns t WHERE NOT t.pinned AND ($1::text IS NULL OR t.user_id = $1) AND ($2::text IS NULL OR t.session_id = $2)
         AND ($3::timestamptz IS NULL OR t.created_at < $3) AND ($4::float8 IS NULL OR t.importance < $4)
         AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.user_id = t.user_id AND e.id = t.id AND e.pinned)
       RETURNING t.user_id, t.id, t.session_id`,
      [
        c.userId ?? null,
        c.sessionId ?? null,
        c.olderThanDays === undefined ? null : new Date(Date.now() - c.olderThanDays * 86_400_000).toISOString(),
        c.belowImportance ?? null,
      ],
    );
  }

  async deleteWhere(userId: string, sessionId?: string): Promise<number> {
    return this.pg.run('DELETE FROM turns WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2)', [userId, sessionId ?? null]);
  }
}

/** The append's statements in the caller's transaction (the exchange's restore runs them in its own). */
export async function appendIn(tx: Tx, turns: readonly Turn[], acceptedAt: number): Promise<AppendResult> {
  if (turns.length === 0) return { accepted: [], duplicates: [] };
  const { taken, duplicates } = await appendTurns(tx, turns, acceptedAt);
  return { accepted: turns.filter((_, i) => taken.has(i)), duplicates };
}

/** appendIn's work: the positions of `turns` written now (the first of each id new to the user). */
async function appendRows(tx: Tx, turns: readonly Turn[], acceptedAt: number): Promise<Set<number>> {
  return (await appendTurns(tx, turns, acceptedAt)).taken;
}

async function appendTurns(tx: Tx, turns: readonly Turn[], acceptedAt: number): Promise<{ taken: Set<number>; duplicates: string[] }> {
  const fresh = new Map<string, { turn: Turn; index: number }>();
  const repeats: Array<{ turn: Turn; index: number }> = [];
  turns.forEach((turn, index) => {
    const key = `${turn.user_id}\u0000${turn.id}`;
    const first = fresh.get(key);
    if (!first) return fresh.set(key, { turn, index });
    if (!sameTurn(first.turn, turn)) throw new ContentConflictError(turn.id, index);
    repeats.push({ turn, index });
  });
  const candidates = [...fresh.values()];
  const { sql, values } = bulkInsert('turns', [...TURN_COLUMNS, 'accepted_at'], candidates.map((c) => ({ ...c.turn, accepted_at: acceptedAt })));
  const inserted = await tx.query<{ user_id: string; id: string }>(`${sql} ON CONFLICT (user_id, id) DO NOTHING RETURNING user_id, id`, values);
  const written = new Set(inserted.map((r) => `${r.user_id}\u0000${r.id}`));
  const held = candidates.filter((c) => !written.has(`${c.turn.user_id}\u0000${c.turn.id}`));
  const duplicates: string[] = [];
  if (held.length > 0) {
    const rows = await tx.query<Held & { user_id: string; id: string }>(
      `SELECT t.user_id, t.id, t.session_id, t.role, t.name, t.content FROM turns t
       JOIN unnest($1::text[], $2::text[]) AS k(user_id, id) ON t.user_id = k.user_id AND t.id = k.id`,
      [held.map((c) => c.turn.user_id), held.map((c) => c.turn.id)],
    );
    const byKey = new Map(rows.map((r) => [`${r.user_id}\u0000${r.id}`, r]));
    for (const c of held) {
      const row = byKey.get(`${c.turn.user_id}\u0000${c.turn.id}`);
      if (!row || !sameTurn(row, c.turn)) throw new ContentConflictError(c.turn.id, c.index);
      duplicates.push(c.turn.id);
    }
  }
  for (const r of repeats) duplicates.push(r.turn.id);
  const taken = new Set(candidates.filter((c) => written.has(`${c.turn.user_id}\u0000${c.turn.id}`)).map((c) => c.index));
  return { taken, duplicates };
}
