import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { MatchRecords } from '../../../../src/adapters/sqlite/match-records.js';
import type { RecordFilter } from '../../../../src/domain/filters.js';
import { userEntry as entry } from '../../../helpers/entries.js';
import { tmpDir } from '../../../helpers/tmp.js';

/** a long entry (past LONG_ROW_TOKENS words) holding "ferry" `n` times, so its record counts it */
const long = (i: number, n: number) => `${Array.from({ length: n }, () => 'ferry').join(' ')} ${Array.from({ length: 150 }, (_, k) => `word${(i * 7 + k) % 400}`).join(' ')} harbour`;
/** ann's i-th text: long ones every fourth */
const text = (i: number) => (i % 4 === 0 ? long(i, 2 + (i % 5)) : i % 3 === 0 ? `the ferry left the harbour, note ${i}` : `lunch by the harbour, note ${i}`);

/**
 * What a text search reads of each matched row (its owner, length and session; a long row's recorded
 * repeats) is kept by the connection while no entry is changed or deleted, whichever process writes: a
 * second search reads none of it again, and a search after another connection's edit, delete or reuse
 * of a rowid finds what a store that never searched finds. Reads are counted at the statement.
 */
describe('what a text search keeps of matched rows', () => {
  const path = join(tmpDir(), 'match-records.db');
  let db: Db;
  let other: Db;
  let store: SqliteLongTermStore;
  /** another process's store: its own connection to the file */
  let writer: SqliteLongTermStore;
  const reads = { sizes: 0, repeats: 0, rows: 0 };

  before(() => {
    db = openDatabase(path);
    // bob first and larger: ann holds under half the index, so her matches are read as rowids and
    // their records by rowid (the path this keeps); her entries are the newest rowids
    new SqliteLongTermStore(db).upsertSync([
      ...Array.from({ length: 60 }, (_, i) => entry('bob', i, `the ferry to the harbour, bob ${i}`)),
      ...Array.from({ length: 40 }, (_, i) => entry('ann', i, text(i))),
    ]);
    const prepare = db.prepare.bind(db);
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const st = prepare(sql);
      const kind = /FROM entry_sizes z WHERE z\.rowid IN \(SELECT value FROM json_each/.test(sql) ? 'sizes' : /FROM entry_repeats r WHERE r\.rowid IN/.test(sql) ? 'repeats' : /FROM entries WHERE rowid IN \(/.test(sql) ? 'rows' : null;
      if (kind === null) return st;
      const all = st.all.bind(st);
      st.all = ((...args: unknown[]) => {
        reads[kind]++;
        return all(...(args as [never]));
      }) as typeof st.all;
      return st;
    }) as typeof db.prepare;
    store = new SqliteLongTermStore(db);
    other = openDatabase(path);
    writer = new SqliteLongTermStore(other);
  });
  after(() => {
    db.close();
    other.close();
  });

  const fresh = () => new SqliteLongTermStore(openDatabase(path));
  const scores = async (s: SqliteLongTermStore, query = 'ferry harbour note') =>
    (await s.searchText('ann', query, { limit: 40, bySession: true })).map((h) => [h.entry.id, h.bm25.toFixed(9), h.session_bm25?.toFixed(9)]);
  const reset = () => Object.assign(reads, { sizes: 0, repeats: 0, rows: 0 });

  it('reads each matched row once, then not again while no entry changes, finding the same', async () => {
    reset();
    const first = await scores(store);
    assert.ok(first.length > 20, JSON.stringify(first));
    assert.deepEqual([reads.sizes, reads.repeats], [1, 1], 'read once, for all the words');
    assert.ok(reads.rows > 0, 'the entries returned read');
    reset();
    assert.deepEqual(await scores(store), first);
    assert.deepEqual([reads.sizes, reads.repeats, reads.rows], [0, 0, 0], 'nothing read again, the entries returned included');
    assert.deepEqual(await scores(fresh()), first, 'as a store that never searched');
  });

  it("reads only a new entry's row after an insert", async () => {
    await scores(store);
    await writer.upsert([entry('ann', 100, long(100, 9))]);
    reset();
    const now = await scores(store);
    assert.deepEqual(now, await scores(fresh()));
    assert.ok(now.some(([id]) => id === 'ann-100'), 'the new entry is found');
    assert.deepEqual([reads.sizes, reads.repeats], [1, 1], 'the new row');
  });

  it("takes another connection's edit of a text", async () => {
    await scores(store);
    // ann-4's record counted ferry 6 times: now once, in a short text
    await writer.update('ann', 'ann-4', { content: 'ferry, once' });
    const after = await scores(store);
    assert.deepEqual(after, await scores(fresh()), 'the new length and count');
    assert.ok(after.some(([id]) => id === 'ann-4'));
  });

  it("takes another connection's delete, and a rowid taken again by a new entry", async () => {
    const rowidOf = (id: string) => other.prepare('SELECT rowid FROM entries WHERE user_id = ? AND id = ?').pluck().get('ann', id) as number | undefined;
    await scores(store);
    const last = rowidOf('ann-100')!;
    await writer.delete('ann', ['ann-100']);
    assert.deepEqual(await scores(store), await scores(fresh()));
    await scores(store);
    await writer.upsert([entry('ann', 101, 'a ferry')]);
    assert.equal(rowidOf('ann-101'), last, "the deleted entry's rowid, taken again");
    const now = await scores(store);
    assert.deepEqual(now, await scores(fresh()), "the new entry's length and no record, not the old one's");
    assert.ok(now.some(([id]) => id === 'ann-101'));
  });

  it("takes another connection's edit of an entry's importance or pin, and any other update of its row", async () => {
    const found = async (s: SqliteLongTermStore) => (await s.searchText('ann', 'ferry harbour note', { limit: 40 })).find((h) => h.entry.id === 'ann-6')!.entry;
    assert.equal((await found(store)).importance, 0.5);
    await writer.update('ann', 'ann-6', { importance: 0.9, pinned: true });
    const edited = await found(store);
    assert.deepEqual([edited.importance, edited.pinned], [0.9, true], 'the entry as it is now, not as it was kept');
    other.prepare("UPDATE entries SET updated_at = '2031-01-01T00:00:00.000Z', content_hash = 'h' WHERE user_id = 'ann' AND id = 'ann-6'").run();
    assert.deepEqual([(await found(store)).updated_at, (await found(store)).content_hash], ['2031-01-01T00:00:00.000Z', 'h']);
  });

  it("takes another connection's change of an entry's metadata, role, kind or time, which a filtered search tests", async () => {
    const filtered = async (s: SqliteLongTermStore, where: RecordFilter) => (await s.searchText('ann', 'ferry harbour note', { limit: 40, where })).map((h) => h.entry.id).sort();
    const cases: Array<[RecordFilter, string]> = [
      [{ metadata: { topic: 'boats' } }, `metadata = '{"topic":"boats"}'`],
      [{ roles: ['assistant'] }, "role = 'assistant'"],
      [{ kinds: ['summary'] }, "kind = 'summary'"],
      [{ created_before: '2023-06-01T00:00:00.000Z' }, "created_at = '2023-01-01T00:00:00.000Z'"],
    ];
    for (const [where, set] of cases) {
      assert.deepEqual(await filtered(store, where), [], JSON.stringify(where));
      // no write path of the store changes these today; the count must not depend on it
      other.prepare(`UPDATE entries SET ${set} WHERE user_id = 'ann' AND id = 'ann-3'`).run();
      assert.deepEqual(await filtered(store, where), ['ann-3'], JSON.stringify(where));
      assert.deepEqual(await filtered(fresh(), where), ['ann-3']);
    }
  });
});

describe('MatchRecords, past what it keeps', () => {
  let db: Db;
  before(() => {
    db = openDatabase(join(tmpDir(), 'match-records-limits.db'));
    new SqliteLongTermStore(db).upsertSync(Array.from({ length: 30 }, (_, i) => entry(i % 2 ? 'ann' : 'bob', i, long(i, 2 + (i % 3)))));
  });
  after(() => db.close());

  const rowids = (user: string) => db.prepare('SELECT rowid FROM entries WHERE user_id = ? ORDER BY rowid').pluck().all(user) as number[];

  it('answers for every row asked for when they outnumber the rows it keeps', () => {
    const kept = new MatchRecords(db, { rows: 8 });
    kept.refresh();
    const ann = rowids('ann');
    assert.equal(kept.matchesOf('ann', [ann.slice(0, 6)]).size, 6);
    const all = kept.matchesOf('ann', [ann.slice(0, 6), ann.slice(6)]);
    assert.deepEqual([...all.keys()].sort((a, b) => a - b), ann, 'the rows kept before are read again with the rest');
    const bob = rowids('bob');
    assert.deepEqual(kept.matchesOf('ann', [bob]).size, 0, "another user's rows are not ann's");
  });

  it('answers for every record asked for when they outnumber the characters it keeps', () => {
    const kept = new MatchRecords(db, { recordChars: 100 });
    kept.refresh();
    const ann = rowids('ann');
    const expected = new Map(db.prepare('SELECT rowid, repeats FROM entry_repeats').raw().all() as Array<[number, string]>);
    kept.loadRecords(new Set(ann.slice(0, 3)));
    kept.loadRecords(new Set(ann));
    for (const rowid of ann) assert.equal(kept.record(rowid), expected.get(rowid) ?? null);
  });

  it('answers for the attributes of every row asked for when they outnumber the rows it keeps', () => {
    const kept = new MatchRecords(db, { attributeRows: 8 });
    kept.refresh();
    const all = rowids('ann').concat(rowids('bob'));
    const expected = new Map(
      (db.prepare('SELECT rowid, session_id, role, kind, created_at FROM entries').raw().all() as Array<[number, string, string, string, string]>).map(([rowid, ...rest]) => [rowid, rest]),
    );
    kept.attributesOf(all.slice(0, 6));
    const got = kept.attributesOf(all);
    assert.equal(got.length, all.length);
    all.forEach((rowid, i) => {
      const a = got[i];
      assert.deepEqual([a?.session_id, a?.role, a?.kind, a?.created_at], expected.get(rowid));
      assert.deepEqual(a?.metadata, {});
    });
    // in the order asked, kept rows and read ones alike, a row that does not exist in its place
    const mixed = kept.attributesOf([all[1]!, 1e9, all.at(-1)!, all[0]!]);
    assert.deepEqual(mixed.map((a) => a?.created_at), [expected.get(all[1]!)![3], undefined, expected.get(all.at(-1)!)![3], expected.get(all[0]!)![3]]);
  });
});
