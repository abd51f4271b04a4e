import type { RecordFilter } from '../../domain/filters.js';
import type { EmbedderTag, VectorFilter, VectorPayload, VectorPoint } from '../../ports/vector-index.js';
import { toBlob, toFloat32 } from '../embedded/rows.js';
import { lastParts } from '../vector-parts.js';
import { pruneStep, type Change, type FullRow, type IndexRow, type LoadPut, type RemovedRow, type VectorStore, type Written } from '../embedded/store.js';
import { filterSql } from './filter-sql.js';
import type { Postgres, Tx } from './pool.js';

/** "ncvs": the lock every writer of `vectors` holds to its commit (migration 2 takes it in the trigger too) */
export const VECTOR_WRITE_LOCK = 0x6e63_7673;
const LOAD_PAGE = 5_000;
const PAYLOAD = 'user_id, session_id, role, name, kind, content, content_hash, created_at, metadata';
/** a row's time as the in-memory index keeps it (IndexRow.created_ms); stored times hold milliseconds */
const CREATED_MS = '(extract(epoch FROM created_at) * 1000)::float8 AS created_ms';

type PayloadRow = VectorPayload & { seq: number; id: string; part: number; embedder: string; vector: Buffer };

/**
 * The embedded index's vectors and change log in PostgreSQL: every API and worker process on every
 * host reads and writes the same rows, and catches up on the others' writes from `vector_changes`
 * (see EmbeddedVectorIndex). `vectors.seq` is the rowid the in-memory index keeps (an upsert keeps
 * it). A write is one transaction holding VECTOR_WRITE_LOCK from its start: writes are serialised
 * across processes, so the change seqs it logs are (head before, head after] and commit in order.
 */
export class PostgresVectorStore implements VectorStore {
  readonly kind = 'postgres' as const;
  readonly where: string;

  constructor(private readonly pg: Postgres) {
    this.where = pg.where;
  }

  async upsert(batch: ReadonlyArray<{ tag: EmbedderTag; points: readonly VectorPoint[] }>, retain: number): Promise<Written<number[][]>> {
    // one row per key: a statement may not update a row twice; the last write of a key wins, as in order
    const last = new Map<string, { tag: EmbedderTag; p: VectorPoint }>();
    for (const u of batch) for (const p of u.points) last.set(keyOf(p.payload.user_id, p.id, u.tag.id, p.part ?? 0), { tag: u.tag, p });
    const rows = [...last.values()];
    // each call replaces its entries: their parts beyond the highest given go (an edit to a shorter text)
    const trims = batch.flatMap((u) => lastParts(u.points).map(({ user_id, id, last }) => ({ user_id, id, embedder: u.tag.id, lastPart: last })));
    return this.write(retain, async (tx) => {
      const written = await tx.query<{ seq: number; user_id: string; id: string; embedder: string; part: number }>(
        `INSERT INTO vectors (id, embedder, part, dim, ${PAYLOAD}, vector)
         SELECT u.id, u.embedder, u.part, u.dim, u.user_id, u.session_id, u.role, u.name, u.kind, u.content, u.content_hash, u.created_at, u.metadata::jsonb, u.vector
         FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                     $11::timestamptz[], $12::text[], $13::bytea[], $14::int4[])
           AS u(id, embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, metadata, vector, part)
         ON CONFLICT (user_id, id, embedder, part) DO UPDATE SET dim = excluded.dim, session_id = excluded.session_id, role = excluded.role,
           name = excluded.name, kind = excluded.kind, content = excluded.content, content_hash = excluded.content_hash,
           created_at = excluded.created_at, metadata = excluded.metadata, vector = excluded.vector
         RETURNING seq, user_id, id, embedder, part`,
        [
          rows.map((r) => r.p.id),
          rows.map((r) => r.tag.id),
          rows.map((r) => r.tag.dim),
          rows.map((r) => r.p.payload.user_id),
          rows.map((r) => r.p.payload.session_id),
          rows.map((r) => r.p.payload.role),
          rows.map((r) => r.p.payload.name),
          rows.map((r) => r.p.payload.kind),
          // a passage keeps no copy of the turn's text: a search it wins reads part 0's (wholeRows)
          rows.map((r) => ((r.p.part ?? 0) === 0 ? r.p.payload.content : '')),
          rows.map((r) => r.p.payload.content_hash),
          rows.map((r) => r.p.payload.created_at),
          rows.map((r) => (r.p.payload.metadata ? JSON.stringify(r.p.payload.metadata) : null)),
          rows.map((r) => toBlob(r.p.vector)),
          rows.map((r) => r.p.part ?? 0),
        ],
      );
      if (trims.length > 0) {
        await tx.run(
          `DELETE FROM vectors v USING unnest($1::text[], $2::text[], $3::text[], $4::int4[]) AS t(user_id, id, embedder, last_part)
           WHERE v.user_id = t.user_id AND v.id = t.id AND v.embedder = t.embedder AND v.part > t.last_part`,
          [trims.map((t) => t.user_id), trims.map((t) => t.id), trims.map((t) => t.embedder), trims.map((t) => t.lastPart)],
        );
      }
      const seqOf = new Map(written.map((w) => [keyOf(w.user_id, w.id, w.embedder, w.part), w.seq]));
      return batch.map((u) => u.points.map((p) => seqOf.get(keyOf(p.payload.user_id, p.id, u.tag.id, p.part ?? 0))!));
    });
  }

  delete(userId: string, ids: readonly string[], retain: number): Promise<Written<RemovedRow[]>> {
    return this.write(retain, (tx) => tx.query<RemovedRow>('DELETE FROM vectors WHERE user_id = $1 AND id = ANY($2::text[]) RETURNING user_id, id, embedder', [userId, ids]));
  }

  deleteWhere(filter: VectorFilter, retain: number, rows?: number): Promise<Written<RemovedRow[]>> {
    return this.write(retain, (tx) =>
      tx.query<RemovedRow>(
        'DELETE FROM vectors WHERE seq IN (SELECT seq FROM vectors WHERE user_id = $1 AND ($2::text IS NULL OR session_id = $2) LIMIT $3) RETURNING user_id, id, embedder',
        [filter.user_id, filter.session_id ?? null, rows ?? null],
      ),
    );
  }

  deleteAll(retain: number): Promise<Written<number>> {
    return this.write(retain, (tx) => tx.run('DELETE FROM vectors'));
  }

  deleteOtherEmbedders(keep: EmbedderTag, retain: number): Promise<Written<number>> {
    return this.write(retain, (tx) => tx.run('DELETE FROM vectors WHERE embedder != $1', [keep.id]));
  }

  /** pages in seq order (keyset): rows written meanwhile are replayed from the change log */
  async load(tag: EmbedderTag, reserve: (userId: string, n: number) => void, put: LoadPut): Promise<void> {
    for (const r of await this.pg.query<{ user_id: string; n: number }>('SELECT user_id, count(*) AS n FROM vectors WHERE embedder = $1 GROUP BY user_id', [tag.id])) {
      reserve(r.user_id, r.n);
    }
    let after = 0;
    for (;;) {
      const rows = await this.pg.query<IndexRow & { vector: Buffer }>(
        `SELECT seq AS rowid, id, part, user_id, session_id, ${CREATED_MS}, vector FROM vectors WHERE embedder = $1 AND dim = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
        [tag.id, tag.dim, after, LOAD_PAGE],
      );
      for (const r of rows) put(r.id, r.user_id, r.session_id, r.rowid, toFloat32(r.vector), r.part, r.created_ms);
      if (rows.length < LOAD_PAGE) return;
      after = rows[rows.length - 1]!.rowid;
    }
  }

  async current(keys: readonly Change[]): Promise<Array<IndexRow & { embedder: string }>> {
    if (keys.length === 0) return [];
    const rows = await this.pg.query<IndexRow & { embedder: string; vector: Buffer }>(
      `SELECT v.seq AS rowid, v.id, v.part, v.user_id, v.session_id, v.embedder, ${CREATED_MS}, v.vector FROM vectors v
       JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(user_id, id, embedder) ON v.user_id = k.user_id AND v.id = k.id AND v.embedder = k.embedder`,
      [keys.map((k) => k.user_id), keys.map((k) => k.id), keys.map((k) => k.embedder)],
    );
    return rows.map((r) => ({ ...r, vector: toFloat32(r.vector) }));
  }

  async matching(tag: EmbedderTag, userId: string, where: RecordFilter): Promise<Set<number>> {
    const f = filterSql(where, 3);
    const rows = await this.pg.query<{ seq: number }>(`SELECT seq FROM vectors WHERE embedder = $1 AND user_id = $2${f.sql}`, [tag.id, userId, ...f.params]);
    return new Set(rows.map((r) => r.seq));
  }

  async byRowids(rowids: readonly number[]): Promise<Map<number, FullRow>> {
    const out = new Map<number, FullRow>();
    if (rowids.length === 0) return out;
    const rows = await this.pg.query<PayloadRow>(`SELECT seq, id, part, embedder, ${PAYLOAD}, vector FROM vectors WHERE seq = ANY($1::int8[])`, [rowids]);
    for (const { seq, id, part, embedder, vector, ...payload } of rows) out.set(seq, { id, part, embedder, vector: toFloat32(vector), payload });
    return out;
  }

  async wholeRows(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Map<string, FullRow>> {
    const out = new Map<string, FullRow>();
    if (ids.length === 0) return out;
    const rows = await this.pg.query<PayloadRow>(
      `SELECT seq, id, part, embedder, ${PAYLOAD}, vector FROM vectors WHERE user_id = $1 AND embedder = $2 AND id = ANY($3::text[]) AND part = 0`,
      [userId, tag.id, ids],
    );
    for (const { seq: _, id, part, embedder, vector, ...payload } of rows) out.set(id, { id, part, embedder, vector: toFloat32(vector), payload });
    return out;
  }

  async has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.pg.query<{ id: string }>('SELECT id FROM vectors WHERE user_id = $1 AND embedder = $2 AND id = ANY($3::text[]) AND part = 0', [userId, tag.id, ids]);
    return new Set(rows.map((r) => r.id));
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    const [r] = await this.pg.query<{ n: number }>(
      'SELECT count(*) AS n FROM vectors WHERE part = 0 AND ($1::text IS NULL OR embedder = $1) AND ($2::text IS NULL OR user_id = $2) AND ($3::text IS NULL OR session_id = $3)',
      [tag?.id ?? null, filter?.user_id ?? null, filter?.session_id ?? null],
    );
    return r!.n;
  }

  head(): Promise<{ head: number; pruned: number }> {
    return headOf(this.pg);
  }

  since(seq: number, limit: number): Promise<Change[]> {
    return this.pg.query<Change>('SELECT seq, user_id, id, embedder FROM vector_changes WHERE seq > $1 ORDER BY seq LIMIT $2', [seq, limit]);
  }

  async ping(): Promise<void> {
    await this.pg.query('SELECT 1');
  }

  /** one transaction holding the write lock: the changes it logs are (head before, head after] */
  private write<T>(retain: number, fn: (tx: Tx) => Promise<T>): Promise<Written<T>> {
    return this.pg.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [VECTOR_WRITE_LOCK]);
      const before = await headOf(tx);
      const result = await fn(tx);
      const after = await headOf(tx);
      const through = after.head - retain;
      if (through - after.pruned >= pruneStep(retain)) {
        await tx.run('DELETE FROM vector_changes WHERE seq <= $1', [through]);
        await tx.run('UPDATE vector_changes_state SET pruned_through = greatest(pruned_through, $1)', [through]);
      }
      return { result, changes: { from: before.head, to: after.head } };
    });
  }
}

const keyOf = (userId: string, id: string, embedder: string, part: number) => `${userId}\u0000${id}\u0000${embedder}\u0000${part}`;

/**
 * The newest change seq committed and the newest pruned. Under the write lock every committed seq is
 * visible in order, so the greatest present seq is the head (pruning keeps the newest ones).
 */
async function headOf(db: Pick<Tx, 'query'>): Promise<{ head: number; pruned: number }> {
  const [r] = await db.query<{ head: number; pruned: number }>(
    'SELECT greatest(coalesce((SELECT max(seq) FROM vector_changes), 0), pruned_through) AS head, pruned_through AS pruned FROM vector_changes_state',
  );
  return r!;
}
