import type { EmbedderProvider } from '../embedding/provider.js';
import type { DurableStore } from '../ports/durable-store.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { JobQueue } from '../../queues/queue.js';
import type { InspectedEntry, SessionSummary, UserSummary } from '../domain/inspection.js';
import type { UserScope } from '../ports/maintenance.js';
import { QUEUE_NAMES, type QueueName } from '../../queues/names.js';
import type { FailedJob } from '../../queues/queue.js';

/** What the inspector's views read. */
export interface InspectDeps {
  store: Pick<DurableStore, 'maintenance'>;
  longTerm: LongTermStore;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  embedders: EmbedderProvider;
}

/**
 * Read-only views for the memory inspector (the web page and its /inspect routes): who has memories,
 * their sessions, and where each memory of a session lives. Every function is scoped by the caller to
 * the users it may see; nothing here decides access.
 */

export { InspectedEntrySchema, SessionSummarySchema, UserSummarySchema, type InspectedEntry, type SessionSummary, type UserSummary } from '../domain/inspection.js';

export interface OwnedFailedJob extends FailedJob {
  /** the user whose memory the job worked on; null for jobs of no one user (archive) or of a vanished turn */
  user_id: string | null;
}

export type { UserScope } from '../ports/maintenance.js';

/** Users with anything stored, most recently active first; a scoped listing also names its users that hold nothing. */
export async function listUsers(s: InspectDeps, scope: UserScope, limit: number): Promise<UserSummary[]> {
  const rows = await s.store.maintenance.users(scope, limit);
  if (scope.all) return rows;
  const seen = new Set(rows.map((r) => r.user_id));
  for (const user_id of scope.users) if (!seen.has(user_id)) rows.push({ user_id, sessions: 0, turns: 0, entries: 0, last_at: null });
  return rows.slice(0, limit);
}

/** A user's sessions (turn log and long-term store), most recently active first. */
export async function listSessions(s: InspectDeps, userId: string, limit: number): Promise<SessionSummary[]> {
  const rows = await s.store.maintenance.sessions(userId, limit);
  // a Redis that is away must not hide what SQLite holds: live is then unknown, shown as false
  const live = new Set(await s.shortTerm.sessions(userId).catch(() => [] as string[]));
  return rows.map((r) => ({ ...r, live: live.has(r.session_id) }));
}

/**
 * The newest `limit` memories of one session, oldest first: turn-log turns and long-term entries
 * (summaries and archives too) merged by id, each with the tiers that hold it. A long-term entry's
 * values win over its turn's (an edit changes the entry).
 */
export async function sessionEntries(s: InspectDeps, userId: string, sessionId: string, limit: number): Promise<InspectedEntry[]> {
  const turns = await s.store.maintenance.sessionTurns(userId, sessionId, limit);
  const entries = await s.longTerm.recent(userId, { sessionId, limit });
  const [shortTerm, embedder] = [await s.shortTerm.recent(userId, sessionId).catch(() => []), s.embedders.current()];

  const byId = new Map<string, InspectedEntry>();
  for (const { turn: t, pending } of turns) {
    byId.set(t.id, {
      id: t.id,
      user_id: userId,
      session_id: sessionId,
      role: t.role,
      name: t.name,
      kind: 'turn',
      content: t.content,
      importance: t.importance,
      pinned: t.pinned,
      created_at: t.created_at,
      updated_at: null,
      tiers: { turn_log: true, short_term: false, semantic: null, long_term: false },
      pending,
    });
  }
  for (const e of entries) {
    const turn = byId.get(e.id);
    byId.set(e.id, {
      id: e.id,
      user_id: userId,
      session_id: sessionId,
      role: e.role,
      name: e.name,
      kind: e.kind,
      content: e.content,
      importance: e.importance,
      pinned: e.pinned,
      created_at: e.created_at,
      updated_at: e.updated_at,
      tiers: { turn_log: turn !== undefined, short_term: false, semantic: null, long_term: true },
      pending: turn?.pending ?? { embed: false, persist: false },
    });
  }
  const inShortTerm = new Set(shortTerm.map((t) => t.id));
  const ids = [...byId.keys()];
  const withVector = embedder ? await s.vectors.has(embedder, userId, ids).catch(() => null) : null;
  for (const item of byId.values()) {
    item.tiers.short_term = inShortTerm.has(item.id);
    item.tiers.semantic = withVector ? withVector.has(item.id) : null;
  }
  return [...byId.values()].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)).slice(-limit);
}

/** The owner of a job's memory: `user_id` in its payload (every job about a memory carries it). */
function jobOwner(s: InspectDeps, data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as { user_id?: unknown; turn_id?: unknown };
  if (typeof d.user_id === 'string') return d.user_id;
  return null;
}

/** Failed jobs of one queue or all, newest first per queue, each with the user it concerns. */
export async function failedJobs(s: InspectDeps, queue: QueueName | undefined, limit: number): Promise<OwnedFailedJob[]> {
  const queues = queue ? [queue] : [...QUEUE_NAMES];
  const lists = await Promise.all(queues.map((q) => s.queue.failed(q, limit)));
  return lists.flat().map((j) => ({ ...j, user_id: jobOwner(s, j.data) }));
}
