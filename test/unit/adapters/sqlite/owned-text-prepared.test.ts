import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { OWNED_TEXT_FUNCTION, ownedText, ownerPrefix, prepareOwnedText, preparedOwnedTexts, PREPARED_FROM_CHARS, registerOwnedText } from '../../../../src/adapters/sqlite/owned-text.js';

/** what the index's trigger gets for (user, text) */
function triggerText(userId: string, text: string): string {
  const db = new Database(':memory:');
  registerOwnedText(db);
  try {
    return db.prepare(`SELECT ${OWNED_TEXT_FUNCTION}(?, ?)`).pluck().get(userId, text) as string;
  } finally {
    db.close();
  }
}

const longText = (i: number) => `note ${i}: ${'the ferry leaves the harbour at nine '.repeat(Math.ceil(PREPARED_FROM_CHARS / 36))}`;

describe('owned texts prepared before their insert', () => {
  it("gives the trigger the prepared text of the same user once, and never another user's", () => {
    const text = longText(1);
    prepareOwnedText('ann', text);
    assert.equal(triggerText('bob', text), ownedText(ownerPrefix('bob'), text), "bob's equal text is bob's words");
    assert.equal(triggerText('ann', text), ownedText(ownerPrefix('ann'), text));
    assert.equal(triggerText('ann', text), ownedText(ownerPrefix('ann'), text), 'taken once, then computed');
  });

  it('keeps at most 2 million characters of texts never inserted, the oldest out first', () => {
    const before = preparedOwnedTexts();
    for (let i = 0; i < 700; i++) prepareOwnedText('carla', longText(1_000 + i));
    const kept = preparedOwnedTexts();
    assert.ok(kept.chars <= 2_000_000, `${kept.chars} characters kept`);
    assert.ok(kept.texts < 700 + before.texts, `${kept.texts} texts kept`);
    // the newest is still there (taken by its insert), the oldest was pushed out (computed, same answer)
    assert.equal(triggerText('carla', longText(1_699)), ownedText(ownerPrefix('carla'), longText(1_699)));
    assert.equal(preparedOwnedTexts().texts, kept.texts - 1, 'the newest was taken');
    prepareOwnedText('carla', 'short');
    assert.equal(preparedOwnedTexts().texts, kept.texts - 1, 'a short text is not prepared');
  });
});
