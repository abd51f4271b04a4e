import type { Db } from '../../src/adapters/sqlite/db.js';

/**
 * Tells `onRead` of every read of one query word's matches by the SQLite store's text search (its
 * statements bounded by @floor, or by @below read newest first): the phrase matched and how many rowids came back, as rows or as one
 * JSON array. Wraps the statements the connection prepares from then on: call before making the store.
 */
export function watchPhraseReads(db: Db, onRead: (match: string, rowids: number) => void): void {
  const prepare = db.prepare.bind(db);
  (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
    const st = prepare(sql);
    if (!sql.includes('@floor') && !sql.includes('@below')) return st;
    const all = st.all.bind(st);
    const get = st.get.bind(st);
    st.all = ((params: { match: string }) => {
      const rows = all(params) as unknown[];
      onRead(params.match, rows.length);
      return rows;
    }) as typeof st.all;
    st.get = ((params: { match: string }) => {
      const row = get(params);
      onRead(params.match, (JSON.parse(row as string) as unknown[]).length);
      return row;
    }) as typeof st.get;
    return st;
  }) as typeof db.prepare;
}
