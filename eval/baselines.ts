// The baselines every figure stands beside: plain keyword search over ALL turns of the user (not only
// the long-term tier), as BM25 (SQLite FTS5) and as substring matching (LIKE). They share the
// service's query-term extraction, so the comparison measures ranking, not tokenizing.
import Database from 'better-sqlite3';
import { ftsMatchExpression, queryTerms } from '../src/retrieval/query-terms.js';
import { likePattern } from '../src/tiers/sqlite/long-term.js';
import type { EvalTurn } from './dataset.js';

export class KeywordBaselines {
  private readonly db: Database.Database;
  private readonly bm25Stmt: Database.Statement;

  constructor(turns: readonly EvalTurn[]) {
    this.db = new Database(':memory:');
    this.db.exec(`
      CREATE TABLE turns (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT, content TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE INDEX turns_user ON turns (user_id, created_at);
      CREATE VIRTUAL TABLE turns_fts USING fts5(content, name, content='turns', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
    `);
    const insert = this.db.prepare('INSERT INTO turns (id, user_id, name, content, created_at) VALUES (@id, @user_id, @name, @content, @created_at)');
    this.db.transaction(() => {
      for (const t of turns) insert.run(t);
    })();
    this.db.exec(`INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')`);
    this.bm25Stmt = this.db.prepare(
      `SELECT t.id FROM turns_fts JOIN turns t ON t.rowid = turns_fts.rowid
       WHERE turns_fts MATCH ? AND t.user_id = ? ORDER BY bm25(turns_fts) LIMIT ?`,
    );
  }

  /** BM25 over content and name, equal column weights: what plain FTS5 gives. */
  bm25(userId: string, query: string, k: number): string[] {
    const match = ftsMatchExpression(query);
    if (!match) return [];
    return (this.bm25Stmt.all(match, userId, k) as Array<{ id: string }>).map((r) => r.id);
  }

  /** Turns containing the most query terms as substrings (of content or name), newest first among equals. */
  like(userId: string, query: string, k: number): string[] {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const hits = terms.map((_, i) => `(content LIKE @p${i} ESCAPE '\\' OR coalesce(name, '') LIKE @p${i} ESCAPE '\\')`);
    const params: Record<string, unknown> = { user_id: userId, k };
    terms.forEach((t, i) => (params[`p${i}`] = likePattern(t)));
    const sql = `SELECT id, ${hits.join(' + ')} AS matched FROM turns WHERE user_id = @user_id AND matched > 0
                 ORDER BY matched DESC, created_at DESC LIMIT @k`;
    return (this.db.prepare(sql).all(params) as Array<{ id: string }>).map((r) => r.id);
  }

  close(): void {
    this.db.close();
  }
}
