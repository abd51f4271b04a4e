import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../../src/adapters/sqlite/db.js';
import { SqliteLongTermStore } from '../../../../src/adapters/sqlite/long-term.js';
import { preparedOwnedTexts, PREPARED_FROM_CHARS } from '../../../../src/adapters/sqlite/owned-text.js';
import { repeatsOf } from '../../../../src/adapters/sqlite/repeats.js';
import { entry } from '../../../contract/long-term.contract.js';
import { tmpDir } from '../../../helpers/tmp.js';

const longText = (topic: string, end: string) => `${`We planned the ${topic} step by step, with what each part costs and when. `.repeat(Math.ceil(PREPARED_FROM_CHARS / 60))}${end}`;

/**
 * An edit of a long entry's text works out what its write derives from the two texts — the text
 * index's owned texts of the old one and the new, the new one's repeated words — before its
 * transaction, as a turn's persist does: inside it, an edit of a 32,000-character reply to another
 * held the event loop ~45 ms. Checked where it shows: when the transaction begins, both texts are
 * prepared; once it is done, the trigger has taken them; and the index and the record are the new
 * text's.
 */
describe('SQLite long-term store: an edit of a long text', () => {
  it('prepares the old and the new text before its transaction, and indexes the new one', async () => {
    const db = openDatabase(join(tmpDir(), 'edit.db'));
    const store = new SqliteLongTermStore(db);
    const before = longText('kitchen renovation', 'The tiles arrive on Tuesday.');
    const after = longText('garden terrace', 'The gravel arrives on Friday.');
    const e = entry('ann', before, { name: 'assistant' });
    await store.upsert([e]);

    const prepared = preparedOwnedTexts().texts;
    let atBegin: number | null = null;
    const transaction = db.transaction.bind(db);
    (db as { transaction: Db['transaction'] }).transaction = ((fn: (...a: unknown[]) => unknown) =>
      transaction((...a: unknown[]) => {
        atBegin ??= preparedOwnedTexts().texts;
        return fn(...a);
      })) as Db['transaction'];
    const edited = await store.update('ann', e.id, { content: after });

    assert.equal(edited?.content, after);
    assert.equal(atBegin, prepared + 2, 'the old text and the new one were prepared when the transaction began');
    assert.equal(preparedOwnedTexts().texts, prepared, "the index's trigger took both");
    assert.deepEqual((await store.searchText('ann', 'gravel Friday', { limit: 5 })).map((h) => h.entry.id), [e.id]);
    assert.deepEqual(await store.searchText('ann', 'tiles Tuesday', { limit: 5 }), []);
    const rowid = db.prepare('SELECT rowid FROM entries WHERE id = ?').pluck().get(e.id);
    assert.equal(db.prepare('SELECT repeats FROM entry_repeats WHERE rowid = ?').pluck().get(rowid), repeatsOf(after, 'assistant'));
  });
});
