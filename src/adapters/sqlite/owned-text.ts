import { createHash } from 'node:crypto';
import type { Database as Db } from 'better-sqlite3';

// The text index holds each user's words apart: every word of an entry is indexed with its owner's
// prefix glued to its front ("bq…z" + "garden"), so a word's posting list in the index is one user's
// (migration 21). Before, a word's list held every tenant's rows and each read was intersected with
// the owner's own list (`owner_token`, migration 16): a search read, for each of its ~35 words, the
// user's whole list of rows and the word's rows of every tenant (RealMem dev, 150 messages: 1.35 ms of
// FTS5 a message, 0.37 with the words held apart). The entry's row in entry_sizes stays the authority
// on its owner; the prefix only narrows what the index reads.
//
// A delete gives the index the prefixed text again (migration 21's triggers): the prefix of an id and
// the runs prefixed must never change without a migration that rebuilds the index.
//
// The prefix is 14 consonants from a hash of the user id (60 bits): FTS5's porter stemmer counts a
// word's vowel–consonant groups from its start, and consonants ahead of the word leave that count, and
// so the stem, as they were. FTS5 tokenizes the prefixed text and the prefixed query words alike, so a
// character the two sides class differently (unicode61's tables are older than JavaScript's) splits
// or joins both the same way.

/** the SQL function the index's triggers call: the text with its owner's prefix before each word */
export const OWNED_TEXT_FUNCTION = 'nc_owned_text';

const CONSONANTS = 'bcdfghjklmnpqrstvwxz';
const PREFIX_CHARS = 14;
/** a run of what unicode61 reads as one token, as JavaScript classes it (letters, digits, private use) */
const WORD_RUN = /[\p{L}\p{N}\p{Co}]+/gu;
const PREFIXES_KEPT = 4096;

const prefixes = new Map<string, string>();

/** the user's prefix: 14 of 20 consonants, from the first 60 bits of the id's SHA-256 */
export function ownerPrefix(userId: string): string {
  let p = prefixes.get(userId);
  if (p !== undefined) return p;
  let v = createHash('sha256').update(userId, 'utf8').digest().readBigUInt64BE(0) >> 4n;
  p = '';
  for (let i = 0; i < PREFIX_CHARS; i++) {
    p += CONSONANTS[Number(v % 20n)];
    v /= 20n;
  }
  if (prefixes.size >= PREFIXES_KEPT) prefixes.clear();
  prefixes.set(userId, p);
  return p;
}

/** `text` with `prefix` before each of its words, as the index holds the text of the prefix's owner */
export function ownedText(prefix: string, text: string): string {
  // the prefix is consonants only: no `$` pattern in the replacement
  return text.replace(WORD_RUN, `${prefix}$&`);
}

/** texts this long or longer may be prepared (prepareOwnedText); a shorter one costs little in the trigger */
export const PREPARED_FROM_CHARS = 4_000;
/** the most characters of prepared texts kept (about 2 bytes each): a write that never came leaves its text here until pushed out */
const PREPARED_CHARS = 2_000_000;

/** owned texts computed before their insert, by the text; oldest first */
const prepared = new Map<string, { userId: string; owned: string }>();
let preparedChars = 0;

/**
 * Computes the owned text of a long text that is about to be inserted, so that the insert's trigger
 * (which must run inside the write's transaction) finds it done: a 32,000-character turn's prefixing
 * took ~2 ms of a ~7 ms insert, inside the transaction batcher's one turn of the event loop.
 * Bounded; a text not inserted is pushed out by later ones.
 */
export function prepareOwnedText(userId: string, text: string): void {
  if (text.length < PREPARED_FROM_CHARS || prepared.has(text)) return;
  prepared.set(text, { userId, owned: ownedText(ownerPrefix(userId), text) });
  preparedChars += text.length;
  for (const [t] of prepared) {
    if (preparedChars <= PREPARED_CHARS) break;
    prepared.delete(t);
    preparedChars -= t.length;
  }
}

/** the prepared texts kept now, and their characters (tests, stats) */
export function preparedOwnedTexts(): { texts: number; chars: number } {
  return { texts: prepared.size, chars: preparedChars };
}

/** the owned text of `text` for `userId`, prepared (and taken) or computed now */
function ownedTextOf(userId: string, text: string): string {
  if (text.length >= PREPARED_FROM_CHARS) {
    const p = prepared.get(text);
    if (p !== undefined && p.userId === userId) {
      prepared.delete(text);
      preparedChars -= text.length;
      return p.owned;
    }
  }
  return ownedText(ownerPrefix(userId), text);
}

/** Registers the function the text index's triggers call: every connection that writes entries needs it. */
export function registerOwnedText(db: Db): void {
  db.function(OWNED_TEXT_FUNCTION, { deterministic: true }, (userId: unknown, text: unknown) =>
    typeof text === 'string' && typeof userId === 'string' ? ownedTextOf(userId, text) : text,
  );
}
