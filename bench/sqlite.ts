import type { Services } from '../src/app.js';
import type { Db } from '../src/adapters/sqlite/db.js';
import type { SqliteStore } from '../src/adapters/sqlite/open.js';
import { ownedText, ownerPrefix } from '../src/adapters/sqlite/owned-text.js';
import { ftsMatchExpression } from '../src/retrieval/query-terms.js';

/** The SQLite store behind the services, for bench sections that measure the file itself (sync paths, bare SQL). */
export function sqliteOf(services: Services): SqliteStore & { db: Db } {
  if (services.store.kind !== 'sqlite' || !services.db) throw new Error('this bench section measures the SQLite file: run it without database_url');
  return services.store as SqliteStore;
}

/** The bare FTS5 query of a text's content words for one user, as the SQLite index holds that user's words (owned-text.ts). */
export function bareFtsMatch(userId: string, text: string): string {
  const prefix = ownerPrefix(userId);
  return ftsMatchExpression(text, undefined, (word) => ownedText(prefix, word));
}
