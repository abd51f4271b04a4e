import type { Statement } from 'better-sqlite3';
import type { Db } from '../../src/adapters/sqlite/db.js';

// better-sqlite3 does not expose the rows a statement visits (sqlite3_stmt_scanstatus): a test reads
// what a statement walks from its query plan.

/** Records the SQL of every statement `db` prepares from now on; the list is cleared by setting its length. */
export function recordPrepared(db: Db): string[] {
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
  return prepared;
}

/** Records the SQL of every statement `db` prepares from now on each time one of them runs; cleared by setting its length. */
export function recordRun(db: Db): string[] {
  const ran: string[] = [];
  const prepare = db.prepare.bind(db);
  (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
    const st = prepare(sql);
    const methods = st as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ['get', 'all', 'run', 'iterate']) {
      const f = methods[m]!.bind(st);
      methods[m] = (...a: unknown[]) => (ran.push(sql), f(...a));
    }
    return st;
  }) as typeof db.prepare;
  return ran;
}

/**
 * The steps of `sql`'s query plan (not recorded by recordPrepared). The plan does not depend on the
 * values bound, only on there being one for each parameter, `?` or `@name`.
 */
export function planOf(db: Db, sql: string): string[] {
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map(([, name]) => [name, 'x']));
  const params: unknown[] = [...(sql.match(/\?/g) ?? []).map(() => 'x'), ...(Object.keys(named).length > 0 ? [named] : [])];
  const unrecorded = (Object.getPrototypeOf(db) as Db).prepare.call(db, `EXPLAIN QUERY PLAN ${sql}`) as Statement<unknown[]>;
  return (unrecorded.all(...params) as Array<{ detail: string }>).map((r) => r.detail);
}
