import type { MemoryEntry } from '../../../domain/entry.js';
import { namedValues, underAlias, valuesToRow } from './columns.js';

/** An `entries` row as better-sqlite3 returns it (booleans as 0/1, JSON as text). */
export interface EntryRow {
  id: string;
  user_id: string;
  session_id: string;
  role: MemoryEntry['role'];
  name: string | null;
  kind: MemoryEntry['kind'];
  content: string;
  content_hash: string;
  importance: number;
  pinned: number;
  metadata: string | null;
  covers: string | null;
  created_at: string;
  updated_at: string;
}

/** The columns of `entries`, in the domain's order. */
export const ENTRY_COLUMNS =
  'id, user_id, session_id, role, name, kind, content, content_hash, importance, pinned, metadata, covers, created_at, updated_at';

export const entryColumnsOf = (alias: string): string => underAlias(ENTRY_COLUMNS, alias);
export const ENTRY_VALUES = namedValues(ENTRY_COLUMNS);

/** an `entries` row read with `.raw()`, its columns (`ENTRY_COLUMNS`) from `at` */
export const entryRowOf = valuesToRow<EntryRow>(ENTRY_COLUMNS);

export function rowToEntry(r: EntryRow): MemoryEntry {
  return {
    id: r.id,
    user_id: r.user_id,
    session_id: r.session_id,
    role: r.role,
    name: r.name,
    kind: r.kind,
    content: r.content,
    content_hash: r.content_hash,
    importance: r.importance,
    pinned: r.pinned === 1,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : null,
    covers: r.covers ? (JSON.parse(r.covers) as string[]) : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** An entry as the parameters of an INSERT of `ENTRY_COLUMNS`. */
export function entryParams(e: MemoryEntry): EntryRow {
  // assigned, not `{ ...e, k }`: V8 builds that on a slow path (see entryCandidate in src/retrieval/retrieve.ts)
  return Object.assign({}, e, {
    pinned: e.pinned ? 1 : 0,
    metadata: e.metadata ? JSON.stringify(e.metadata) : null,
    covers: e.covers ? JSON.stringify(e.covers) : null,
  });
}
