import type { Db } from '../sqlite/db.js';
import type { EmbedderTag, VectorFilter, VectorHit, VectorIndex, VectorPayload, VectorPoint } from '../vector-index.js';

interface Row extends VectorPayload {
  id: string;
  vector: Buffer;
}

/**
 * Embedded semantic tier: vectors persisted in the SQLite file, searched in memory.
 * (First version: exact scan over the user's rows.)
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly backend = 'embedded' as const;
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      upsert: db.prepare(
        `INSERT OR REPLACE INTO vectors (id, embedder, dim, user_id, session_id, role, name, kind, content, content_hash, created_at, vector)
         VALUES (@id, @embedder, @dim, @user_id, @session_id, @role, @name, @kind, @content, @content_hash, @created_at, @vector)`,
      ),
      user: db.prepare(
        'SELECT id, user_id, session_id, role, name, kind, content, content_hash, created_at, vector FROM vectors WHERE embedder = ? AND user_id = ?',
      ),
    };
  }

  async upsert(tag: EmbedderTag, points: readonly VectorPoint[]): Promise<void> {
    for (const p of points) if (p.vector.length !== tag.dim) throw new Error(`vector of ${p.vector.length} dimensions; embedder ${tag.id} has ${tag.dim}`);
    this.db.transaction(() => {
      for (const p of points) {
        this.s.upsert.run({ id: p.id, embedder: tag.id, dim: tag.dim, ...p.payload, vector: Buffer.from(p.vector.buffer, p.vector.byteOffset, p.vector.byteLength) });
      }
    })();
  }

  async search(tag: EmbedderTag, query: Float32Array, filter: VectorFilter, k: number): Promise<VectorHit[]> {
    const rows = this.s.user.all(tag.id, filter.user_id) as Row[];
    const hits: VectorHit[] = [];
    for (const r of rows) {
      if (filter.session_id !== undefined && r.session_id !== filter.session_id) continue;
      const v = new Float32Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength / 4);
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
      const { id, vector: _v, ...payload } = r;
      hits.push({ id, score: dot, payload });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, k);
  }

  async has(tag: EmbedderTag, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    const stmt = this.db.prepare('SELECT 1 FROM vectors WHERE id = ? AND embedder = ?');
    for (const id of ids) if (stmt.get(id, tag.id)) out.add(id);
    return out;
  }

  async delete(ids: readonly string[]): Promise<void> {
    const stmt = this.db.prepare('DELETE FROM vectors WHERE id = ?');
    this.db.transaction(() => ids.forEach((id) => stmt.run(id)))();
  }

  async deleteWhere(filter: VectorFilter): Promise<number> {
    return this.db
      .prepare('DELETE FROM vectors WHERE user_id = ? AND (? IS NULL OR session_id = ?)')
      .run(filter.user_id, filter.session_id ?? null, filter.session_id ?? null).changes;
  }

  async deleteAll(): Promise<void> {
    this.db.prepare('DELETE FROM vectors').run();
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    const row = this.db
      .prepare('SELECT count(*) AS n FROM vectors WHERE (@e IS NULL OR embedder = @e) AND (@u IS NULL OR user_id = @u) AND (@s IS NULL OR session_id = @s)')
      .get({ e: tag?.id ?? null, u: filter?.user_id ?? null, s: filter?.session_id ?? null }) as { n: number };
    return row.n;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
