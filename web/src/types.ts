/**
 * The API shapes the inspector reads, as /openapi.json documents them (src/api/schemas.ts and
 * src/api/routes/inspect.ts are the source). Written out here because the page is compiled for the
 * browser, apart from the server's Node code; the end-to-end tests catch a drift.
 */

export type Tier = 'short_term' | 'semantic' | 'long_term';
export const TIERS: readonly Tier[] = ['short_term', 'semantic', 'long_term'];
export type Kind = 'turn' | 'summary' | 'archive';
export type Role = 'user' | 'assistant' | 'system' | 'tool';

export interface WhoAmI {
  admin: boolean;
  keys_enabled: boolean;
  users: string[] | null;
  default_user: string;
  queue_backend: 'bullmq' | 'in-process';
  queue_board: string | null;
}

export interface UserSummary {
  user_id: string;
  sessions: number;
  turns: number;
  entries: number;
  last_at: string | null;
}

export interface SessionSummary {
  session_id: string;
  turns: number;
  entries: number;
  first_at: string;
  last_at: string;
  live: boolean;
}

export interface InspectedEntry {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  kind: Kind;
  content: string;
  importance: number | null;
  pinned: boolean;
  created_at: string;
  updated_at: string | null;
  tiers: { turn_log: boolean; short_term: boolean; semantic: boolean | null; long_term: boolean };
  pending: { embed: boolean; persist: boolean };
}

/** a long-term entry, as /memory/search and PATCH /memory/:id answer */
export interface MemoryEntry {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  kind: Kind;
  content: string;
  content_hash: string;
  importance: number;
  pinned: boolean;
  metadata: Record<string, unknown> | null;
  covers: string[] | null;
  created_at: string;
  updated_at: string;
}

export interface Explain {
  similarity: number | null;
  bm25: number | null;
  ranks: Partial<Record<Tier, number>>;
  period_rank: number | null;
  fusion: number;
  context_of: string | null;
  relevance: number;
  in_period: boolean | null;
  tier_priority: number;
  recency: number;
  importance: number;
  superseded_by: string | null;
}

export interface RetrievalResult {
  id: string;
  user_id: string;
  session_id: string;
  role: Role;
  name: string | null;
  kind: Kind;
  content: string;
  tier: Tier;
  score: number;
  created_at: string;
  explain: Explain;
}

export interface TierReport {
  backend: string;
  status: 'ok' | 'timeout' | 'error' | 'skipped';
  ms: number;
  count: number;
  error?: string;
}

export interface RetrieveResponse {
  results: RetrievalResult[];
  prompt_blocks: string;
  tiers: Record<Tier, TierReport>;
}

export interface BackendReport {
  backend: string;
  state: string;
  detail?: string;
}

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

export interface Health {
  status: 'ok' | 'degraded' | 'down';
  backends: Record<string, BackendReport>;
  embedder: { model: string; status: string; id: string | null; dim: number | null; error?: string };
  sqlite_path?: string;
  queues: Record<string, JobCounts>;
  turn_log?: { total: number; pending_embed: number; pending_persist: number };
}

export interface FailedJob {
  queue: string;
  jobId: string;
  attempts: number;
  reason: string;
  failedAt: string | null;
  data: unknown;
  user_id: string | null;
}

export interface DeleteResult {
  id: string;
  removed: { long_term: boolean; turn_log: boolean; short_term: boolean; semantic: boolean };
}

/** what an entry row needs, whichever route it came from */
export type EntryLike = Pick<InspectedEntry, 'id' | 'user_id' | 'session_id' | 'role' | 'name' | 'kind' | 'content' | 'pinned' | 'created_at'> & {
  importance: number | null;
  /** absent for /memory/search rows: those are long-term entries */
  tiers?: InspectedEntry['tiers'];
  pending?: InspectedEntry['pending'];
};
