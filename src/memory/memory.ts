import { entryOfTurn, type MemoryEntry, type RetrievalResult } from '../domain/entry.js';
import { contentHash } from '../domain/hash.js';
import { embedJob, memoryJobIds } from '../../queues/producers.js';
import { NotFoundError } from '../errors.js';
import { RetrieveRequestSchema, type RetrieveRequestInput } from '../retrieval/request.js';
import type { Retriever, RetrieveOptions, RetrieveResponse } from '../retrieval/retrieve.js';
import type { EntryPatch, MemoryRef, PruneCriteria } from '../ports/long-term.js';
import { parseOrThrow } from '../validate.js';
import type { AddTurnsResult, WritePath } from './write-path.js';
import { exportUser, importRecords, type ExchangeDeps, type ExportHeader, type ExportRecord, type ImportOptions, type ImportReport } from './export.js';
import { clearAll, clearSession, forgetUser, settleElsewhere, type ErasureDeps, type ErasureOptions, type ErasureReport } from './forget.js';
import { failedJobs, listSessions, listUsers, sessionEntries, type InspectDeps, type InspectedEntry, type OwnedFailedJob, type SessionSummary, type UserScope, type UserSummary } from './inspect.js';
import type { QueueName } from '../../queues/names.js';
import type { CompactionResult, ConversationCompactor } from '../compaction/compactor.js';
import type { Logger } from '../logger.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { Tombstones } from '../ports/tombstones.js';
import type { TurnLog } from '../ports/turn-log.js';
import type { ErasureScope } from '../ports/erasure.js';
import { SessionIdSchema, UserIdSchema } from '../domain/turn.js';
import { z } from 'zod';

const CompactRequestSchema = z.object({ user_id: UserIdSchema, session_id: SessionIdSchema });

export interface ListQuery {
  user_id: string;
  session_id?: string;
  limit: number;
}

/** What `ready()` reports: whether the semantic tier will be searched, and why not. */
export interface ReadyReport {
  /** `unavailable`: the embedding server does not answer yet; the semantic tier is used once it does */
  embedder: { model: string; status: 'ready' | 'unavailable' | 'failed'; error: string | null };
}

export interface DeleteResult {
  id: string;
  /** which tiers held the memory */
  removed: { long_term: boolean; turn_log: boolean; short_term: boolean; semantic: boolean };
}

/**
 * What `Memory` uses: the erasure, export/import and inspection deps of its functions, and the ports
 * and use cases its own methods call (a composition root hands in its services, which hold them).
 */
export type MemoryDeps = ErasureDeps &
  ExchangeDeps &
  InspectDeps & {
    log: Logger;
    turnLog: TurnLog;
    longTerm: LongTermStore;
    writePath: Pick<WritePath, 'addTurns'>;
    retriever: Pick<Retriever, 'retrieve' | 'promptBlocks'>;
    compactor: Pick<ConversationCompactor, 'compact'>;
    /** marks of deleted texts for embed workers without the durable store (null: no Redis) */
    tombstones: Tombstones | null;
    /** closes what the composition root built */
    close(): Promise<void>;
  };

/** attempts at moving a delete's old text out of the write-ahead log before leaving it to the next checkpoint */
const LOG_SCRUB_TRIES = 10;

/**
 * The memory service as a library (docs/architecture.md, retrieval): what `createMemory()` returns. Thin over the services;
 * the HTTP API and the CLI call the same methods.
 */
export class Memory {
  constructor(readonly services: MemoryDeps) {}

  /**
   * Resolves once the embedding model has loaded (or failed to: then the semantic tier is skipped
   * and `error` says why). A retrieve before that skips the semantic tier, so a program that needs
   * it from its first query awaits this after `createMemory()`.
   */
  async ready(): Promise<ReadyReport> {
    const { embedders } = this.services;
    const e = await embedders.ready();
    return { embedder: { model: embedders.model, status: e ? 'ready' : embedders.status === 'unavailable' ? 'unavailable' : 'failed', error: embedders.error } };
  }

  addTurns(turns: unknown | readonly unknown[]): Promise<AddTurnsResult> {
    return this.services.writePath.addTurns(Array.isArray(turns) ? turns : [turns]);
  }

  /** `options.signal`: the caller stopped waiting (see RetrieveOptions); the pass then stops and rejects with a RequestAbortedError */
  async retrieve(request: RetrieveRequestInput, options: RetrieveOptions = {}): Promise<RetrieveResponse> {
    return this.services.retriever.retrieve(parseOrThrow(RetrieveRequestSchema, request), Date.now(), options);
  }

  formatPromptBlocks(results: readonly RetrievalResult[]): string {
    return this.services.retriever.promptBlocks(results);
  }

  /** long-term substring search; `%`, `_` and `\` match literally */
  search(q: string, query: ListQuery): Promise<MemoryEntry[]> {
    return this.services.longTerm.searchSubstring(query.user_id, q, { limit: query.limit, ...(query.session_id ? { sessionId: query.session_id } : {}) });
  }

  recent(query: ListQuery): Promise<MemoryEntry[]> {
    return this.services.longTerm.recent(query.user_id, { limit: query.limit, ...(query.session_id ? { sessionId: query.session_id } : {}) });
  }

  /** One long-term entry of the user; ids are the user's own (another user's equal id is another memory). */
  async get(userId: string, id: string): Promise<MemoryEntry | null> {
    return this.services.longTerm.get(userId, id);
  }

  /**
   * The memory `id` of the user wherever retrieval can find it: its long-term entry, else its logged
   * turn as the entry it would be (a turn under the importance threshold, or not persisted yet, has
   * none, yet the short-term and semantic tiers return it). What GET /memory/:id answers.
   */
  async find(userId: string, id: string): Promise<MemoryEntry | null> {
    const entry = await this.services.longTerm.get(userId, id);
    if (entry) return entry;
    const turn = await this.services.turnLog.get(userId, id);
    return turn ? entryOfTurn(turn) : null;
  }

  /** Whether the user holds a memory with this id in the long-term store or the turn log. */
  async exists(userId: string, id: string): Promise<boolean> {
    return (await this.find(userId, id)) !== null;
  }

  /**
   * Edits a memory (see find); a changed text is re-embedded. A logged turn without a long-term entry
   * (under the importance threshold) is kept there from now on, with the importance it has.
   */
  async edit(userId: string, id: string, patch: EntryPatch): Promise<MemoryEntry> {
    const { longTerm, turnLog, shortTerm, queue, tombstones } = this.services;
    const held = await this.keepTurn(userId, id);
    const before = patch.content !== undefined ? held : null;
    if (before && patch.content !== undefined) {
      const hash = contentHash(patch.content);
      // before the vectors go: an embed worker without the turn log checks these (docs/architecture.md, embed workers without the durable store)
      if (before.content_hash !== hash) await tombstones?.supersede(userId, id, before.content_hash, hash);
      // the turn log first: a persist or embed job of the old text re-checks it and writes nothing
      await turnLog.updateContent(userId, id, patch.content, hash);
    }
    const updated = await longTerm.update(userId, id, patch);
    if (!updated) throw new NotFoundError(`memory ${id}`);
    if (patch.content !== undefined) {
      // the old text's vectors go under every embedder, not only the current one: a vector must never
      // outlive its text (a later `memory reindex` keeps vectors it finds, trusting them current)
      await this.services.vectors.delete(userId, [id]).catch((err: unknown) => {
        this.services.log.warn({ err: (err as Error).message }, 'could not delete the old vectors of an edited memory');
      });
      const recent = await shortTerm.recent(userId, updated.session_id);
      if (recent.some((t) => t.id === id)) {
        await shortTerm.replace(
          userId,
          updated.session_id,
          recent.map((t) => (t.id === id ? { ...t, content: updated.content, content_hash: updated.content_hash } : t)),
        );
      }
      // the jobs of the old text go (none keeps it); the new text's job has an id of its own (its hash):
      // an embed job of the old text still running follows the edit itself (workers/embed.ts)
      if (before && before.content_hash !== updated.content_hash) await this.removeJobs(userId, id, [before.content_hash], { persist: false });
      await queue.add('embed', [embedJob(updated, updated.kind, updated.content_hash)]);
      await this.reachOthers({ kind: 'session', userId, sessionId: updated.session_id });
      await this.scrubLog();
    }
    return updated;
  }

  /**
   * The long-term entry of the memory, written first for a logged turn that has none (see edit): the
   * persist job's write, checked against the turn log in its own transaction, so a concurrent delete or
   * edit wins. Null when there is no such memory (the edit then answers 404).
   */
  private async keepTurn(userId: string, id: string): Promise<MemoryEntry | null> {
    const { longTerm, turnLog } = this.services;
    const held = await longTerm.get(userId, id);
    if (held) return held;
    const turn = await turnLog.get(userId, id);
    if (!turn) return null;
    const entry = entryOfTurn(turn);
    if (!(await longTerm.persistTurn(entry))) return longTerm.get(userId, id); // persisted meanwhile, or gone
    await turnLog.markPersisted(userId, id, entry.importance);
    return entry;
  }

  /** Deletes a memory of the user from every tier that holds it. */
  async delete(userId: string, id: string): Promise<DeleteResult> {
    const { longTerm, turnLog, shortTerm, vectors } = this.services;
    const entry = await longTerm.get(userId, id);
    const turn = await turnLog.get(userId, id);
    const held = turn ?? entry;
    if (!held) throw new NotFoundError(`memory ${id}`);
    const embedder = this.services.embedders.current();
    const semantic = embedder ? (await vectors.has(embedder, userId, [id])).has(id) : false;
    // before the vectors go: an embed worker without the turn log checks these (docs/architecture.md, embed workers without the durable store)
    await this.services.tombstones?.bury(userId, [...new Set([turn?.content_hash, entry?.content_hash])].filter((h): h is string => h !== undefined).map((hash) => ({ id, hash })));
    // the turn log first: jobs still running for this turn re-check it before (persist) or after
    // (embed) their write, so whatever they write after this line is removed by them or below
    const turn_log = (await turnLog.delete(userId, [id])) > 0;
    const long_term = (await longTerm.delete(userId, [id])) > 0;
    const removed = { long_term, turn_log, short_term: (await shortTerm.remove(userId, held.session_id, [id])) > 0, semantic };
    await vectors.delete(userId, [id]);
    // its jobs still waiting, delayed or failed hold its text, name and metadata (a running one is
    // removed on completion, FORGOTTEN_ON_COMPLETE, after finding the memory gone)
    await this.removeJobs(userId, id, [turn?.content_hash, entry?.content_hash].filter((h): h is string => h !== undefined));
    await this.reachOthers({ kind: 'session', userId, sessionId: held.session_id });
    await this.scrubLog();
    return { id, removed };
  }

  /**
   * Deletes unpinned memories by age, importance and/or session from every tier: the long-term
   * entries and the logged turns that match (a turn whose entry is pinned stays), with their
   * short-term copies and vectors, so neither retrieval nor `memory reindex` can bring them back.
   */
  async prune(criteria: PruneCriteria): Promise<MemoryRef[]> {
    const { turnLog, longTerm, shortTerm, vectors } = this.services;
    // the turn log first, as in delete
    const turns = await turnLog.prune(criteria);
    const entries = await longTerm.prune(criteria);
    const all = new Map<string, MemoryRef>();
    for (const r of [...turns, ...entries]) all.set(`${r.user_id}\u0000${r.id}`, r);
    const sessions = new Map<string, { user_id: string; session_id: string; ids: string[] }>();
    for (const r of all.values()) {
      const key = `${r.user_id}\u0000${r.session_id}`;
      const s = sessions.get(key) ?? { user_id: r.user_id, session_id: r.session_id, ids: [] };
      s.ids.push(r.id);
      sessions.set(key, s);
    }
    // before the vectors go, as in delete
    if (this.services.tombstones) for (const s of sessions.values()) await this.services.tombstones.bury(s.user_id, s.ids.map((id) => ({ id, hash: null })));
    for (const s of sessions.values()) {
      // an entry pruned whose turn did not match (its importance edited), and the reverse
      await turnLog.delete(s.user_id, s.ids);
      await longTerm.delete(s.user_id, s.ids);
      await shortTerm.remove(s.user_id, s.session_id, s.ids).catch((err: unknown) => {
        this.services.log.warn({ err: (err as Error).message }, 'could not remove pruned turns from the short-term tier');
      });
      await vectors.delete(s.user_id, s.ids);
    }
    // the pruned texts' hashes are not known here: their jobs are found by what they hold, as an erasure's are
    await this.removeJobsHolding(all);
    if (all.size > 0) {
      const { userId, sessionId } = criteria;
      await this.reachOthers(userId === undefined ? { kind: 'all' } : sessionId === undefined ? { kind: 'user', userId } : { kind: 'session', userId, sessionId });
      await this.scrubLog();
    }
    return [...all.values()];
  }

  /**
   * Removes the jobs of a memory by id (see memoryJobIds): waiting or failed ones would keep its text
   * in the queue (Redis) and hold its ids, so that a re-add of the id would wait for the reconciler.
   * A failure is logged: the memory is gone from every store already.
   */
  private async removeJobs(userId: string, id: string, hashes: readonly string[], which = { persist: true }): Promise<void> {
    const ids = memoryJobIds({ user_id: userId, id }, hashes);
    try {
      await this.services.queue.removeByIds('embed', ids.embed);
      if (which.persist) await this.services.queue.removeByIds('persist', ids.persist);
    } catch (err) {
      this.services.log.warn({ err: (err as Error).message }, 'could not remove the jobs of a deleted or edited memory');
    }
  }

  /** Removes the embed and persist jobs of the pruned memories, whatever their ids. */
  private async removeJobsHolding(refs: ReadonlyMap<string, MemoryRef>): Promise<void> {
    if (refs.size === 0) return;
    const holds = (data: unknown) => {
      const d = data as { user_id?: unknown; turn_id?: unknown } | null;
      return typeof d?.user_id === 'string' && typeof d.turn_id === 'string' && refs.has(`${d.user_id}\u0000${d.turn_id}`);
    };
    try {
      for (const q of ['embed', 'persist'] as const) await this.services.queue.removeJobs(q, holds);
    } catch (err) {
      this.services.log.warn({ err: (err as Error).message }, 'could not remove the jobs of pruned memories');
    }
  }

  /**
   * The old text a delete, edit or prune removed leaves the write-ahead log (SQLite: zeroed in the
   * file by secure delete, it stays in the log's page images until a checkpoint; docs/erasure.md).
   * A reader holding the log defers it: retried every second a few times, then left to the next
   * checkpoint. A failure is logged: the memory is gone from every store already.
   */
  private async scrubLog(tries = LOG_SCRUB_TRIES): Promise<void> {
    try {
      const { complete } = await this.services.store.erasure.scrubLog();
      if (!complete && tries > 1) setTimeout(() => void this.scrubLog(tries - 1), 1000).unref();
    } catch (err) {
      this.services.log.warn({ err: (err as Error).message }, 'could not checkpoint the write-ahead log after a delete, edit or prune');
    }
  }

  /**
   * A delete, edit or prune run here reaches the short-term tier of the other running processes that
   * hold one of their own (a `serve` without Redis, when this is the CLI): they settle their copies
   * in scope against the turn log before this returns (see settleElsewhere).
   */
  private async reachOthers(scope: ErasureScope): Promise<void> {
    const { unconfirmed } = await settleElsewhere(this.services, scope);
    if (unconfirmed.length > 0) {
      this.services.log.warn({ processes: unconfirmed }, 'a process holding a short-term tier of its own did not confirm the change in time; it may still show the old copy until it does');
    }
  }

  /**
   * Compacts a session now, in this process (docs/architecture.md, compaction and archival): its conversation becomes one summary in the
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
  users(scope: UserScope, limit: number): Promise<UserSummary[]> {
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
