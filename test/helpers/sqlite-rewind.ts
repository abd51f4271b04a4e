import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js';

/**
 * SQL taking a file back to before migration 21: migration 16's text index (every tenant's words
 * together, the owner as one token of its own), rebuilt from the entries, and migration 20's count of
 * changed entries (before 22).
 */
export const BEFORE_OWNED_TEXT = `${MIGRATIONS.find((m) => m.version === 20)!.sql} ${MIGRATIONS.find((m) => m.version === 16)!.sql}`;

/** SQL taking a file back to before migration 19: no count of changed entries. */
export const BEFORE_ENTRY_CHANGES = `${BEFORE_OWNED_TEXT} DROP TRIGGER entry_changes_ad; DROP TRIGGER entry_changes_au; DROP TABLE entry_changes;`;

/**
 * SQL taking a file back to before migration 18: entry_sizes without the filtered attributes, with
 * migration 17's triggers.
 */
const V17 = MIGRATIONS.find((m) => m.version === 17)!.sql;
export const BEFORE_FILTERED_ATTRIBUTES = `${BEFORE_ENTRY_CHANGES}
  DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_ad; DROP TRIGGER entry_sizes_au;
  ${['session_id', 'role', 'kind', 'created_at', 'metadata'].map((c) => `ALTER TABLE entry_sizes DROP COLUMN ${c};`).join(' ')}
  ${V17.slice(V17.indexOf('CREATE TRIGGER entry_sizes_ai'))}
`;

/**
 * SQL taking a file back to before migration 17: no session_sizes or session_counts, entry_sizes without
 * the session and with migration 13's triggers.
 */
const V13 = MIGRATIONS.find((m) => m.version === 13)!.sql;
export const BEFORE_SESSION_SIZES = `${BEFORE_FILTERED_ATTRIBUTES}
  DROP TRIGGER session_counts_ai; DROP TRIGGER session_counts_ad; DROP TABLE session_counts; DROP TABLE session_sizes;
  DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_ad; DROP TRIGGER entry_sizes_au; ALTER TABLE entry_sizes DROP COLUMN session;
  ${V13.slice(V13.indexOf('CREATE TRIGGER'))}
`;

/**
 * SQL taking a file back to its text index before migration 16 (the owner as its id's words, no
 * owner_token): migration 17 undone, migration 5's index, rebuilt, and the column dropped. Tests that
 * rewind a file to an older version run it first, since 16 cannot add a column the file still holds.
 */
export const BEFORE_OWNER_TOKEN = `${BEFORE_SESSION_SIZES} ${MIGRATIONS.find((m) => m.version === 5)!.sql}; ALTER TABLE entries DROP COLUMN owner_token;`;
