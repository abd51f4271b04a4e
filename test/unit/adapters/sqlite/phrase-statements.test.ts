// The text search's phrase statements differ only in the limit written into them (a small user's
// `common`, a share of its entry count): a store serving users of many sizes keeps the statements in
// use, dropping the least recently used, instead of preparing them again after every 64 sizes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UserBm25 } from '../../../../src/adapters/sqlite/bm25.js';
import { openDatabase } from '../../../../src/adapters/sqlite/db.js';
import { tmpDir } from '../../../helpers/tmp.js';

describe('phrase statements of the text search', () => {
  it('keeps the statements of recent limits while other limits come and go', () => {
    const db = openDatabase(join(tmpDir(), 'phrases.db'));
    try {
      let prepared = 0;
      const prepare = db.prepare.bind(db);
      db.prepare = ((sql: string) => {
        prepared++;
        return prepare(sql);
      }) as typeof db.prepare;
      const bm25 = new UserBm25(db);
      const statement = (limit: number) => (bm25 as unknown as { phraseStatement(limit: number): unknown }).phraseStatement(limit);
      // a hundred user sizes in turn, then the first of them again while new sizes keep arriving
      for (let limit = 10; limit < 110; limit++) statement(limit);
      prepared = 0;
      for (let round = 0; round < 3; round++) {
        for (let limit = 10; limit < 60; limit++) statement(limit);
        statement(1_000 + round);
      }
      assert.equal(prepared, 3, 'only the three new limits were prepared');
      // the same statement for the same limit
      assert.equal(statement(20), statement(20));
    } finally {
      db.close();
    }
  });
});
