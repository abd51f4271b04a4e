import type { Turn } from '../../../domain/turn.js';
import { namedValues, valuesToRow } from './columns.js';

/** A `turns` row as better-sqlite3 returns the record's columns (booleans as 0/1, JSON as text). */
export interface TurnRow {
  id: string;
  user_id: string;
  session_id: string;
  role: Turn['role'];
  name: string | null;
  content: string;
  content_hash: string;
  created_at: string;
  importance: number | null;
  pinned: number;
  metadata: string | null;
}

/** The record's columns of `turns`, in the domain's order (the bookkeeping columns are named where read). */
export const TURN_COLUMNS = 'id, user_id, session_id, role, name, content, content_hash, created_at, importance, pinned, metadata';

export const TURN_VALUES = namedValues(TURN_COLUMNS);

/** a `turns` row read with `.raw()`, its record's columns (`TURN_COLUMNS`) from `at` */
export const turnRowOf = valuesToRow<TurnRow>(TURN_COLUMNS);

export function rowToTurn(r: TurnRow): Turn {
  return {
    id: r.id,
    user_id: r.user_id,
    session_id: r.session_id,
    role: r.role,
    name: r.name,
    content: r.content,
    content_hash: r.content_hash,
    created_at: r.created_at,
    importance: r.importance,
    pinned: r.pinned === 1,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : null,
  };
}

/** A turn as the parameters of an INSERT of `TURN_COLUMNS`. */
export function turnParams(t: Turn): TurnRow {
  // assigned, not `{ ...t, k }`: V8 builds that on a slow path (see entryCandidate in src/retrieval/retrieve.ts)
  return Object.assign({}, t, { pinned: t.pinned ? 1 : 0, metadata: t.metadata ? JSON.stringify(t.metadata) : null });
}
