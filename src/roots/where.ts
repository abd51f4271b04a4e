import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { redactUrl } from '../adapters/postgres/pool.js';
import type { Config } from '../config/schema.js';

type StoreConfig = Pick<Config, 'sqlite_path' | 'database_url'>;

/** The durable store a process with this config opens, as `--help` and `doctor` name it (password masked). */
export function describeStore(config: StoreConfig): string {
  return config.database_url ? `PostgreSQL ${redactUrl(config.database_url)}` : `SQLite ${resolve(config.sqlite_path)}`;
}

/**
 * The SQLite file a read-only command would find nothing in, because it does not exist yet: opening it
 * would create an empty database (in whatever folder the command ran), so such commands say where they
 * looked instead. null for PostgreSQL or a file that exists.
 */
export function missingStore(config: StoreConfig): string | null {
  if (config.database_url) return null;
  const path = resolve(config.sqlite_path);
  return existsSync(path) ? null : path;
}
