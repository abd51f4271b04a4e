import type { Postgres } from '../../src/adapters/postgres/pool.js';

/** What a statement read of one table, from its EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON). */
export interface Reads {
  /** index entries of the table's indexes and heap rows of the table, every loop counted */
  rows: number;
  /** shared buffers the statement touched */
  buffers: number;
  /** the scans of the table, in plan order */
  plan: string[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

/** Runs `sql` under EXPLAIN ANALYZE and counts what it read of `table` (indexes named `<table>…`). */
export async function readsOf(pg: Postgres, table: string, sql: string, values: readonly unknown[]): Promise<Reads> {
  const [row] = await pg.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, values);
  const root = row!['QUERY PLAN'][0]!.Plan;
  const out: Reads = { rows: 0, buffers: root['Shared Hit Blocks'] + root['Shared Read Blocks'], plan: [] };
  const walk = (n: PlanNode) => {
    // a bitmap index scan names only its index; every other scan of the table names the table (its rows are those the index gave)
    if (n['Relation Name'] === table || (n['Node Type'] === 'Bitmap Index Scan' && n['Index Name']?.startsWith(table))) {
      out.rows += (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * n['Actual Loops'];
      out.plan.push(`${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
    }
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(root);
  return out;
}
