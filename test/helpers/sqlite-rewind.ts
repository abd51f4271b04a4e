import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js';

/**
 * SQL taking a file back to its text index before migration 16 (the owner as its id's words, no
 * owner_token): migration 5's index, rebuilt, and the column dropped. Tests that rewind a file to an
 * older version run it first, since 16 cannot add a column the file still holds.
 */
export const BEFORE_OWNER_TOKEN = `${MIGRATIONS.find((m) => m.version === 5)!.sql}; ALTER TABLE entries DROP COLUMN owner_token;`;
