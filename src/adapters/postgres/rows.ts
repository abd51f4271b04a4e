import type { MemoryEntry } from '../../domain/entry.js';
import type { Turn } from '../../domain/turn.js';
import type { Postgres } from './pool.js';

/**
 * Column lists and row mappers of the `turns` and `entries` tables, written once. The pool's type
 * parsers already hand out numbers, booleans, parsed JSON and ISO times, so a row is its record;
 * the mappers only pick the columns (no `seq`, no `tsv`) in the domain's order.
 */
export const TURN_COLUMNS = ['id', 'user_id', 'session_id', 'role', 'name', 'content', 'content_hash', 'created_at', 'importance', 'pinned', 'metadata'] as const;
export const ENTRY_COLUMNS = [
  'id', 'user_id', 'session_id', 'role', 'name', 'kind', 'content', 'content_hash', 'importance', 'pinned', 'metadata', 'covers', 'created_at', 'updated_at',
] as const;

/** The PostgreSQL type of each column, for `unnest($n::type[])` bulk writes. */
const TYPES: Record<string, string> = {
  id: 'text', user_id: 'text', session_id: 'text', role: 'text', name: 'text', kind: 'text', content: 'text', content_hash: 'text',
  created_at: 'timestamptz', updated_at: 'timestamptz', importance: 'float8', pinned: 'bool', metadata: 'jsonb', covers: 'jsonb', accepted_at: 'int8',
};

export const turnSelect = (alias = '') => TURN_COLUMNS.map((c) => `${alias}${c}`).join(', ');
export const entrySelect = (alias = '') => ENTRY_COLUMNS.map((c) => `${alias}${c}`).join(', ');

export function rowToTurn(r: Record<string, unknown>): Turn {
  const t = {} as Record<string, unknown>;
  for (const c of TURN_COLUMNS) t[c] = r[c];
  return t as Turn;
}

export function rowToEntry(r: Record<string, unknown>): MemoryEntry {
  const e = {} as Record<string, unknown>;
  for (const c of ENTRY_COLUMNS) e[c] = r[c];
  return e as MemoryEntry;
}

/**
 * `SELECT … FROM unnest($1::t1[], $2::t2[], …) AS u(cols)`: any number of rows as one relation, one
 * parameter per column (json columns travel as text and are cast per row), parameters numbered from
 * `first`. Returns the SQL and its parameters.
 */
export function unnestRows(columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>, first = 1): { sql: string; values: unknown[][] } {
  const arrays = columns.map((c, i) => `$${first + i}::${TYPES[c] === 'jsonb' ? 'text' : TYPES[c]}[]`);
  const picks = columns.map((c) => (TYPES[c] === 'jsonb' ? `u.${c}::jsonb AS ${c}` : `u.${c}`));
  const values = columns.map((c) =>
    rows.map((r) => {
      const v = r[c];
      return TYPES[c] === 'jsonb' ? (v === null || v === undefined ? null : JSON.stringify(v)) : (v ?? null);
    }),
  );
  return { sql: `SELECT ${picks.join(', ')} FROM unnest(${arrays.join(', ')}) AS u(${columns.join(', ')})`, values };
}

/** `INSERT INTO table (cols) SELECT … FROM unnest(…)`: one statement for any number of rows (the caller appends ON CONFLICT / RETURNING). */
export function bulkInsert(table: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): { sql: string; values: unknown[][] } {
  const { sql, values } = unnestRows(columns, rows);
  return { sql: `INSERT INTO ${table} (${columns.join(', ')}) ${sql}`, values };
}

/** `%`, `_` and `\` in user text match themselves in a LIKE pattern (PostgreSQL's default escape is `\`). */
export function likePattern(q: string): string {
  return `%${likeEscape(q)}%`;
}

/** a LIKE pattern matching text that starts with `prefix` */
export function likePrefix(prefix: string): string {
  return `${likeEscape(prefix)}%`;
}

function likeEscape(q: string): string {
  return q.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Pages through a table in `seq` order (keyset paging: each page starts after the last `seq` seen,
 * so rows written meanwhile never shift a page), optionally one user's rows only.
 */
export async function* scanBySeq<T>(
  pg: Postgres, table: 'turns' | 'entries', select: string, map: (r: Record<string, unknown>) => T, batch: number, userId?: string,
): AsyncGenerator<T[]> {
  let after = 0;
  for (;;) {
    const rows = await pg.query(
      `SELECT ${select}, seq FROM ${table} WHERE seq > $1 AND ($3::text IS NULL OR user_id = $3) ORDER BY seq LIMIT $2`,
      [after, batch, userId ?? null],
    );
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.seq as number;
    yield rows.map(map);
  }
}
