/**
 * The FTS5 clause matching exactly one owner's rows of the text index: the id's own token
 * (`entries.owner_token`, migration 16: the id's UTF-8 bytes in hex and a final "0", which the
 * tokenizer folds to lower case and no stemmer rule changes). One posting list, which FTS5 intersects
 * with a word's; the row's owner in entry_sizes stays the authority.
 */
export function ownerMatch(userId: string): string {
  return `owner_token : "${Buffer.from(userId, 'utf8').toString('hex')}0"`;
}
