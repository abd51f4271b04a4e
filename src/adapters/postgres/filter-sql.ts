import { acceptedValues, isEmptyFilter, type RecordFilter } from '../../domain/filters.js';

/**
 * A retrieval filter as PostgreSQL conditions over `entries` (session_id, role, kind, created_at and
 * a jsonb `metadata`), with the meaning of `matchesFilter`: `AND …` to append to a WHERE clause, with
 * its values as parameters numbered from `first`. jsonb equality is type-strict ("1" is not 1), as the
 * filter's is. Metadata keys go in as parameters too.
 */
export function filterSql(f: RecordFilter | undefined, first: number, alias = ''): { sql: string; params: unknown[] } {
  if (!f || isEmptyFilter(f)) return { sql: '', params: [] };
  const col = (c: string) => `${alias}${c}`;
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${first + params.length - 1}`;
  };
  const parts: string[] = [];
  if (f.session_ids) parts.push(`${col('session_id')} = ANY(${bind(f.session_ids)}::text[])`);
  if (f.roles) parts.push(`${col('role')} = ANY(${bind(f.roles)}::text[])`);
  if (f.kinds) parts.push(`${col('kind')} = ANY(${bind(f.kinds)}::text[])`);
  if (f.created_after !== undefined) parts.push(`${col('created_at')} >= ${bind(f.created_after)}::timestamptz`);
  if (f.created_before !== undefined) parts.push(`${col('created_at')} < ${bind(f.created_before)}::timestamptz`);
  for (const [key, cond] of Object.entries(f.metadata ?? {})) {
    parts.push(`${col('metadata')} -> ${bind(key)}::text = ANY(${bind(acceptedValues(cond).map((v) => JSON.stringify(v)))}::jsonb[])`);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}
