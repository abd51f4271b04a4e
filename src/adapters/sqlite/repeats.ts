import type { Database as Db, Statement } from 'better-sqlite3';
import { stem, words } from '../../retrieval/query-terms.js';

// The words a long entry holds more than once, kept beside it (`entry_repeats`, keyed by the entry's
// rowid) so that text search reads a word's frequency in a row from one short record instead of from
// FTS5's bm25(), whose first call in a statement counts the word's rows in the whole table — every
// tenant's (src/adapters/sqlite/bm25.ts). Written by the store's write paths; triggers on `entries`
// drop a row's record when its text changes or it is deleted, so a stale record never outlives the
// text it was counted from. An entry without a record counts each word it holds once.

/** an entry whose content holds this many words or more has its repeated words recorded */
export const LONG_ROW_TOKENS = 128;
/** a participant's name weighs twice its content in the store's BM25: a name hit counts 2 */
export const NAME_WEIGHT = 2;

/** The key a word's count is recorded under: its light stem (query-terms' `stem`). */
export const repeatKey = (word: string): string => stem(word);

/**
 * " key:count key:count " for the words a long entry holds more than once (content hits + twice its
 * name hits), null for a short entry or one that repeats nothing
 */
export function repeatsOf(content: string, name: string | null): string | null {
  const inContent = words(content);
  if (inContent.length < LONG_ROW_TOKENS) return null;
  const counts = new Map<string, number>();
  for (const w of inContent) {
    const k = repeatKey(w);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const w of words(name ?? '')) {
    const k = repeatKey(w);
    counts.set(k, (counts.get(k) ?? 0) + NAME_WEIGHT);
  }
  let out = ' ';
  for (const [k, n] of counts) if (n > 1) out += `${k}:${n} `;
  return out.length > 1 ? out : null;
}

/** what precedes a word's count in a record (`repeatsOf`): a search builds it once for each of its words, which it looks up in many rows */
export const repeatPattern = (key: string): string => ` ${key}:`;

/** A word's recorded count in a row's record, found by the word's repeatPattern, or null when it is not recorded there. */
export function countAfter(record: string | null, pattern: string): number | null {
  if (record === null) return null;
  const at = record.indexOf(pattern);
  if (at < 0) return null;
  // the digits read where they stand: no slice of a long record for each word of each matched row
  let n = 0;
  for (let i = at + pattern.length, c = record.charCodeAt(i); c >= 48 && c <= 57; c = record.charCodeAt(++i)) n = n * 10 + (c - 48);
  return n;
}

/** Records entries' repeated words after the store wrote their text. */
export class EntryRepeats {
  private readonly put: Statement;
  private readonly textOf: Statement;

  constructor(db: Db) {
    this.put = db.prepare('INSERT OR REPLACE INTO entry_repeats (rowid, repeats) VALUES (?, ?)');
    this.textOf = db.prepare('SELECT rowid, content, name FROM entries WHERE user_id = ? AND id = ?').raw();
  }

  /** after an insert of the entry at `rowid`; `record`: its repeatsOf, when counted before the write */
  inserted(rowid: number | bigint, content: string, name: string | null, record = repeatsOf(content, name)): void {
    if (record !== null) this.put.run(rowid, record);
  }

  /**
   * After an update of an entry's text (a changed text's trigger dropped its old record). `prepared`:
   * the record counted before the write, used when it is of the text and name written.
   */
  rewritten(userId: string, id: string, prepared?: { content: string; name: string | null; repeats: string | null }): void {
    const row = this.textOf.get(userId, id) as [number, string, string | null] | undefined;
    if (!row) return;
    const [rowid, content, name] = row;
    this.inserted(rowid, content, name, prepared && prepared.content === content && prepared.name === name ? prepared.repeats : repeatsOf(content, name));
  }
}

/** Fills the records of every entry written before the table existed (migration 11). */
export function fillRepeats(db: Db): void {
  const repeats = new EntryRepeats(db);
  const page = db.prepare('SELECT rowid, content, name FROM entries WHERE rowid > ? ORDER BY rowid LIMIT 1000').raw();
  for (let after = 0; ; ) {
    const rows = page.all(after) as Array<[number, string, string | null]>;
    if (rows.length === 0) return;
    for (const [rowid, content, name] of rows) repeats.inserted(rowid, content, name);
    after = rows.at(-1)![0];
  }
}
