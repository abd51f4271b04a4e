import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js';

/**
 * SQL taking a file back to before migration 17: no session_sizes, entry_sizes without the session and
 * with migration 13's triggers.
 */
export const BEFORE_SESSION_SIZES = `
  DROP TRIGGER session_sizes_ai; DROP TRIGGER session_sizes_ad; DROP TRIGGER session_sizes_au; DROP TABLE session_sizes;
  DROP TRIGGER entry_sizes_ai; DROP TRIGGER entry_sizes_au; ALTER TABLE entry_sizes DROP COLUMN session_id;
  CREATE TRIGGER entry_sizes_ai AFTER INSERT ON entries BEGIN
    INSERT OR REPLACE INTO entry_sizes (rowid, user_id, bytes) VALUES (new.rowid, new.user_id, octet_length(new.content) + octet_length(coalesce(new.name, '')));
  END;
  CREATE TRIGGER entry_sizes_au AFTER UPDATE OF content, name, user_id ON entries BEGIN
    UPDATE entry_sizes SET user_id = new.user_id, bytes = octet_length(new.content) + octet_length(coalesce(new.name, '')) WHERE rowid = old.rowid;
  END;
`;

/**
 * SQL taking a file back to its text index before migration 16 (the owner as its id's words, no
 * owner_token): migration 17 undone, migration 5's index, rebuilt, and the column dropped. Tests that
 * rewind a file to an older version run it first, since 16 cannot add a column the file still holds.
 */
export const BEFORE_OWNER_TOKEN = `${BEFORE_SESSION_SIZES} ${MIGRATIONS.find((m) => m.version === 5)!.sql}; ALTER TABLE entries DROP COLUMN owner_token;`;
