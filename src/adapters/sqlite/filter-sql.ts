import { acceptedValues, isEmptyFilter, type MetadataScalar, type RecordFilter } from '../../domain/filters.js';

export interface FilterSql {
  /** `AND …` conditions to append to a WHERE clause, or '' */
  sql: string;
  params: Record<string, unknown>;
}

/**
 * A retrieval filter as SQL over a table with session_id, role, kind, created_at and a JSON `metadata`
 * column (`entries`, `vectors`), with the same meaning as `matchesFilter`. Values are bound, never
 * spliced; metadata keys are spliced into a JSON path, which their schema (letters, digits, _ and -)
 * makes safe. Equality is type-strict, as in JSON: json_type tells "1" from 1 and true from 1.
 */
export function filterSql(f: RecordFilter | undefined, alias = ''): FilterSql {
  if (!f || isEmptyFilter(f)) return { sql: '', params: {} };
  const col = (c: string) => (alias ? `${alias}.${c}` : c);
  const params: Record<string, unknown> = {};
  const parts: string[] = [];
  let n = 0;
  const bind = (v: unknown): string => {
    const name = `f${n++}`;
    params[name] = v;
    return `@${name}`;
  };
  const anyOf = (column: string, values: readonly string[]) => parts.push(`${col(column)} IN (${values.map(bind).join(', ')})`);
  if (f.session_ids) anyOf('session_id', f.session_ids);
  if (f.roles) anyOf('role', f.roles);
  if (f.kinds) anyOf('kind', f.kinds);
  if (f.created_after !== undefined) parts.push(`${col('created_at')} >= ${bind(f.created_after)}`);
  if (f.created_before !== undefined) parts.push(`${col('created_at')} < ${bind(f.created_before)}`);
  for (const [key, cond] of Object.entries(f.metadata ?? {})) {
    const path = `'$."${key}"'`;
    const one = (v: MetadataScalar): string => {
      const type = `json_type(${col('metadata')}, ${path})`;
      if (typeof v === 'boolean') return `${type} = '${v ? 'true' : 'false'}'`;
      const value = `json_extract(${col('metadata')}, ${path}) = ${bind(v)}`;
      return typeof v === 'number' ? `(${type} IN ('integer', 'real') AND ${value})` : `(${type} = 'text' AND ${value})`;
    };
    parts.push(`(${acceptedValues(cond).map(one).join(' OR ')})`);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}
