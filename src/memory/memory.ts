import { randomUUID } from 'node:crypto';
import type { Services } from '../app.js';
import type { MemoryEntry, RetrievalResult } from '../domain/entry.js';
import { contentHash } from '../domain/hash.js';
import { embedJob } from '../../queues/producers.js';
import { ContentConflictError, NotFoundError } from '../errors.js';
import { formatPromptBlocks } from '../retrieval/prompt-blocks.js';
import { RetrieveRequestSchema, type RetrieveRequestInput } from '../retrieval/request.js';
import type { RetrieveResponse } from '../retrieval/retrieve.js';
import type { EntryPatch, PruneCriteria } from '../tiers/long-term.js';
import { parseOrThrow } from '../validate.js';
import type { AddTurnsResult } from './write-path.js';
import { exportUser, importRecords, type ExportHeader, type ExportRecord, type ImportOptions, type ImportReport } from './export.js';
import { clearAll, clearSession, forgetUser, type ErasureOptions, type ErasureReport } from './forget.js';
import { failedJobs, listSessions, listUsers, sessionEntries, type InspectedEntry, type OwnedFailedJob, type SessionSummary, type UserScope, type UserSummary } from './inspect.js';
import type { QueueName } from '../../queues/names.js';
import type { CompactionResult } from '../compaction/compactor.js';
import { SessionIdSchema, UserIdSchema } from '../domain/turn.js';
import { z } from 'zod';

const CompactRequestSchema = z.object({ user_id: UserIdSchema, session_id: SessionIdSchema });

export interface ListQuery {
  user_id: string;
  session_id?: string;
  limit: number;
}

export interface DeleteResult {
  id: string;
  /** which tiers held the memory */
  removed: { long_term: boolean; turn_log: boolean; short_term: boolean; semantic: boolean };
}

/**
 * The memory service as a library (SPEC §4): what `createMemory()` returns. Thin over the services;
 * the HTTP API and the CLI call the same methods.
 */
export class Memory {
  constructor(readonly services: Services) {}

  addTurns(turns: unknown | readonly unknown[]): Promise<AddTurnsResult> {
    return this.services.writePath.addTurns(Array.isArray(turns) ? turns : [turns]);
  }

  retrieve(request: RetrieveRequestInput): Promise<RetrieveResponse> {
    return this.services.retriever.retrieve(parseOrThrow(RetrieveRequestSchema, request));
  }

  formatPromptBlocks(results: readonly RetrievalResult[]): string {
    return formatPromptBlocks(results);
  }

  /** long-term substring search; `%`, `_` and `\` match literally */
  search(q: string, query: ListQuery): Promise<MemoryEntry[]> {
    return this.services.longTerm.searchSubstring(query.user_id, q, { limit: query.limit, ...(query.session_id ? { sessionId: query.session_id } : {}) });
  }

  recent(query: ListQuery): Promise<MemoryEntry[]> {
    return this.services.longTerm.recent(query.user_id, { limit: query.limit, ...(query.session_id ? { sessionId: query.session_id } : {}) });
  }

  async get(id: string): Promise<MemoryEntry | null> {
    return this.services.longTerm.get(id);
  }

  /** The user who owns a memory (long-term entry or logged turn), or null when no tier knows the id. */
  async ownerOf(id: string): Promise<string | null> {
    const entry = await this.services.longTerm.get(id);
    return entry?.user_id ?? this.services.turnLog.get(id)?.user_id ?? null;
  }

  /** Edits a long-term entry; a changed text is re-embedded. */
  async edit(id: string, patch: EntryPatch): Promise<MemoryEntry> {
    const { longTerm, turnLog, shortTerm, queue } = this.services;
    const updated = await longTerm.update(id, patch).catch((err: unknown) => {
      // entries are unique per (user, content hash): the new text is already another entry of this user
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new ContentConflictError(id);
      throw err;
    });
    if (!updated) throw new NotFoundError(`memory ${id}`);
    if (patch.content !== undefined) {
      turnLog.updateContent(id, patch.content, contentHash(patch.content));
      // the old text's vectors go under every embedder, not only the current one: a vector must never
      // outlive its text (a later `memory reindex` keeps vectors it finds, trusting them current)
      await this.services.vectors.delete([id]).catch((err: unknown) => {
        this.services.log.warn({ id, err: (err as Error).message }, 'could not delete the old vectors of an edited memory');
      });
      const recent = await shortTerm.recent(updated.user_id, updated.session_id);
      if (recent.some((t) => t.id === id)) {
        await shortTerm.replace(
          updated.user_id,
          updated.session_id,
          recent.map((t) => (t.id === id ? { ...t, content: updated.content, content_hash: updated.content_hash } : t)),
        );
      }
      // a new job id per edit: it must run even while the original embed job is queued, and BullMQ
      // silently drops an id it still remembers (an edit back to an earlier text)
      await queue.add('embed', [embedJob(updated, updated.kind, randomUUID())]);
    }
    return updated;
  }

  /** Deletes a memory from every tier that holds it. */
  async delete(id: string): Promise<DeleteResult> {
    const { longTerm, turnLog, shortTerm, vectors } = this.services;
    const entry = await longTerm.get(id);
    const turn = turnLog.get(id);
    const owner = entry ?? turn;
    if (!owner) throw new NotFoundError(`memory ${id}`);
    const embedder = this.services.embedders.current();
    const semantic = embedder ? (await vectors.has(embedder, [id])).has(id) : false;
    const removed = {
      long_term: (await longTerm.delete([id])) > 0,
      turn_log: turnLog.delete([id]) > 0,
      short_term: (await shortTerm.remove(owner.user_id, owner.session_id, [id])) > 0,
      semantic,
    };
    await vectors.delete([id]);
    return { id, removed };
  }

  /** Deletes unpinned long-term entries by age, importance and/or session, and their vectors. */
  async prune(criteria: PruneCriteria): Promise<string[]> {
    const ids = await this.services.longTerm.prune(criteria);
    if (ids.length > 0) await this.services.vectors.delete(ids);
    return ids;
  }

  /**
   * Compacts a session now, in this process (SPEC §6): its conversation becomes one summary in the
   * long-term tier and at the head of its short-term history; pinned and the newest turns stay.
   */
  compact(userId: string, sessionId: string): Promise<CompactionResult> {
    const ids = parseOrThrow(CompactRequestSchema, { user_id: userId, session_id: sessionId }, 'compaction request');
    return this.services.compactor.compact(ids.user_id, ids.session_id, 'manual');
  }

  /** Erases one session of a user from every tier, pinned memories included. */
  async clearSession(userId: string, sessionId: string, options?: ErasureOptions): Promise<ErasureReport> {
    const ids = parseOrThrow(CompactRequestSchema, { user_id: userId, session_id: sessionId }, 'clear request');
    return clearSession(this.services, ids.user_id, ids.session_id, options);
  }

  /** Erases every memory of every user from every tier. */
  async clearAll(options?: ErasureOptions): Promise<ErasureReport> {
    return clearAll(this.services, options);
  }

  /** Erases everything held about a user: entries, summaries, archives, vectors, short-term, turn log, jobs. */
  async forget(userId: string, options?: ErasureOptions): Promise<ErasureReport> {
    return forgetUser(this.services, parseOrThrow(UserIdSchema, userId, 'user id'), options);
  }

  /** A user's portable export (versioned JSON Lines records, header first; see src/memory/export.ts). */
  async *exportUser(userId: string): AsyncGenerator<ExportHeader | ExportRecord> {
    yield* exportUser(this.services, parseOrThrow(UserIdSchema, userId, 'user id'));
  }

  /** Restores an export, validated whole before anything is written; idempotent. */
  async importRecords(records: Iterable<unknown> | AsyncIterable<unknown>, options?: ImportOptions): Promise<ImportReport> {
    return importRecords(this.services, records, options);
  }

  /** Users with stored memories and their counts, most recently active first (the inspector). */
  users(scope: UserScope, limit: number): UserSummary[] {
    return listUsers(this.services, scope, limit);
  }

  /** A user's sessions with their counts and whether the short-term tier still holds them. */
  sessions(userId: string, limit: number): Promise<SessionSummary[]> {
    return listSessions(this.services, parseOrThrow(UserIdSchema, userId, 'user id'), limit);
  }

  /** The newest memories of one session, each with kind, importance, pinned state and the tiers holding it. */
  sessionEntries(userId: string, sessionId: string, limit: number): Promise<InspectedEntry[]> {
    const ids = parseOrThrow(CompactRequestSchema, { user_id: userId, session_id: sessionId }, 'session');
    return sessionEntries(this.services, ids.user_id, ids.session_id, limit);
  }

  /** Failed jobs of one queue or of all, each with the user it concerns (null: no one user). */
  failedJobs(queue: QueueName | undefined, limit: number): Promise<OwnedFailedJob[]> {
    return failedJobs(this.services, queue, limit);
  }

  /** resolves when every queued job has run (in-process queue) */
  idle(): Promise<void> {
    return this.services.queue.idle();
  }

  close(): Promise<void> {
    return this.services.close();
  }
}
