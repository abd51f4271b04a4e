// The baselines every figure stands beside: plain keyword search over ALL turns of the user (not only
// the long-term tier), as BM25 (SQLite FTS5) and as substring matching (LIKE). They share the
// service's query-term extraction, so the comparison measures ranking, not tokenizing.
import Database from 'better-sqlite3';
import { ftsMatchExpression, queryTerms } from '../src/retrieval/query-terms.js';
import { likePattern } from '../src/adapters/sqlite/long-term.js';
import { BM25_BASELINE, LIKE_BASELINE, type SystemRanking } from './report.js';
/** what the baselines index of a turn */
export type BaselineTurn = { id: string; user_id: string; name: string | null; content: string; created_at: string };

export class KeywordBaselines {
  private readonly db: Database.Database;
  private readonly bm25Stmt: Database.Statement;

  constructor(turns: readonly BaselineTurn[]) {
    this.db = new Database(':memory:');
    this.db.exec(`
      CREATE TABLE turns (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT, content TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE INDEX turns_user ON turns (user_id, created_at);
      CREATE VIRTUAL TABLE turns_fts USING fts5(content, name, content='turns', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE content_fts USING fts5(content, tokenize='porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE said_fts USING fts5(said, tokenize='porter unicode61 remove_diacritics 2');
    `);
    const insert = this.db.prepare('INSERT INTO turns (id, user_id, name, content, created_at) VALUES (@id, @user_id, @name, @content, @created_at)');
    this.db.transaction(() => {
      for (const t of turns) insert.run({ id: t.id, user_id: t.user_id, name: t.name, content: t.content, created_at: t.created_at });
    })();
    this.db.exec(`INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')`);
    // one column each: the content alone, and "<speaker>: <content>" as a plain indexer would store it
    this.db.exec(`INSERT INTO content_fts (rowid, content) SELECT rowid, content FROM turns`);
    this.db.exec(`INSERT INTO said_fts (rowid, said) SELECT rowid, coalesce(name || ': ', '') || content FROM turns`);
    const stmt = (table: string) =>
      this.db.prepare(`SELECT t.id FROM ${table} JOIN turns t ON t.rowid = ${table}.rowid WHERE ${table} MATCH ? AND t.user_id = ? ORDER BY bm25(${table}) LIMIT ?`);
    this.bm25Stmt = stmt('turns_fts');
    this.contentStmt = stmt('content_fts');
    this.saidStmt = stmt('said_fts');
    this.beforeStmt = this.db.prepare(
      'SELECT t.id FROM content_fts CROSS JOIN turns t ON t.rowid = content_fts.rowid WHERE content_fts MATCH ? AND t.user_id = ? AND t.created_at < ? ORDER BY bm25(content_fts) LIMIT ?',
    );
  }

  private readonly beforeStmt: Database.Statement;

  private readonly contentStmt: Database.Statement;
  private readonly saidStmt: Database.Statement;

  /** BM25 over the content alone. */
  bm25Content(userId: string, query: string, k: number): string[] {
    return this.ranked(this.contentStmt, userId, query, k);
  }

  /** BM25 over one column holding "<speaker>: <content>". */
  bm25Said(userId: string, query: string, k: number): string[] {
    return this.ranked(this.saidStmt, userId, query, k);
  }

  private ranked(stmt: Database.Statement, userId: string, query: string, k: number): string[] {
    const match = ftsMatchExpression(query);
    if (!match) return [];
    return (stmt.all(match, userId, k) as Array<{ id: string }>).map((r) => r.id);
  }

  /**
   * BM25 over the content of the user's turns created before `before`, every content word of the query
   * ORed (no cap: plain BM25 over the whole message), the filter applied before ranking as a store's
   * WHERE clause would.
   */
  bm25Before(userId: string, query: string, before: string, k: number): string[] {
    const match = ftsMatchExpression(query, Infinity);
    if (!match) return [];
    return (this.beforeStmt.all(match, userId, before, k) as Array<{ id: string }>).map((r) => r.id);
  }

  /** BM25 over content and name, equal column weights: what plain FTS5 gives. */
  bm25(userId: string, query: string, k: number): string[] {
    return this.ranked(this.bm25Stmt, userId, query, k);
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

/** BM25 and LIKE over every turn, 8 and 20 deep, for each question of the generated set. */
export function baselineRankings(turns: readonly BaselineTurn[], questions: ReadonlyArray<{ id: string; user_id: string; query: string }>): SystemRanking[] {
  const index = new KeywordBaselines(turns);
  try {
    const bm25 = new Map<string, { top8: string[]; top20: string[] }>();
    const like = new Map<string, { top8: string[]; top20: string[] }>();
    for (const q of questions) {
      const b = index.bm25(q.user_id, q.query, 20);
      const l = index.like(q.user_id, q.query, 20);
      bm25.set(q.id, { top8: b.slice(0, 8), top20: b });
      like.set(q.id, { top8: l.slice(0, 8), top20: l });
    }
    return [
      { name: BM25_BASELINE, kind: 'baseline', lists: bm25 },
      { name: LIKE_BASELINE, kind: 'baseline', lists: like },
    ];
  } finally {
    index.close();
  }
}
