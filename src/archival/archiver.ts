import { embedJob } from '../../queues/producers.js';
import { randomUUID } from 'node:crypto';
import type { JobQueue } from '../../queues/queue.js';
import type { MemoryEntry } from '../domain/entry.js';
import { contentHash, shortHash } from '../domain/hash.js';
import { scoreImportance } from '../domain/importance.js';
import { byUser } from '../domain/refs.js';
import { generatedId } from '../domain/turn.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import { room } from '../pace.js';
import { subjectOf, type Logger } from '../logger.js';
import type { LongTermStore, TextIndexMerge } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { ArchiveRun, ArchiveStore, RunTrigger, SessionContents, SessionRef } from '../ports/archive-store.js';
import { ARCHIVE_HEADING, type ArchiveItem, type ArchiveSummarizer } from './summarize.js';

export type { ArchiveItem, ArchiveSummarizer } from './summarize.js';

export interface ArchiverDeps {
  store: ArchiveStore;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  embedders: EmbedderProvider;
  summarizer: ArchiveSummarizer;
  log: Logger;
  /** `archival_inactive_days` */
  inactiveDays: number;
  /** the long-term store, whose text index a run merges last (absent: not merged) */
  textIndex?: Pick<LongTermStore, 'mergeTextIndex'>;
}

export interface ArchiveOptions {
  /** overrides `archival_inactive_days` */
  inactiveDays?: number;
  /** report what would be archived; change nothing */
  dryRun?: boolean;
  /** only this user's sessions */
  userId?: string;
  /** the occurrence (scheduled job id) or a generated id for a run by hand */
  runId?: string;
  trigger?: RunTrigger;
  now?: Date;
  /** called after each session with the number done and the total */
  onProgress?: (done: number, total: number) => void;
}

export type SessionStatus = 'archived' | 'would_archive' | 'changed' | 'failed';

export interface SessionReport {
  user_id: string;
  session_id: string;
  last_at: string;
  archive_id: string;
  status: SessionStatus;
  /** turn-log rows and entries the archive replaces (ids, once each) */
  replaced: number;
  turns: number;
  entries: number;
  /** pinned memories of the session, left untouched */
  pinned_kept: number;
  summarizer?: string;
  error?: string;
}

export interface ArchiveReport {
  run_id: string;
  dry_run: boolean;
  cutoff: string;
  /** a scheduled occurrence that had already completed: nothing was done */
  duplicate: boolean;
  sessions: SessionReport[];
  archived: number;
  replaced: number;
  failed: number;
  vectors_deleted: number;
  /** the text index's merge, the run's last step; null on a dry run, a duplicate, a run for one user, or when it failed (logged) */
  text_index: TextIndexMerge | null;
}

/** The deterministic id of a session's archive: a rerun rewrites the same entry, never a second one. */
export function archiveIdFor(userId: string, sessionId: string): string {
  return generatedId('archive', shortHash(`${userId}\u0000${sessionId}`, 24));
}

const DAY_MS = 86_400_000;
const VECTOR_DELETE_BATCH = 500;

/**
 * Archival (docs/architecture.md, compaction and archival): every session whose last turn is older than the cutoff becomes one `archive`
 * entry. For each session: read its unpinned turns and entries, summarize them, then in one SQLite
 * transaction (which re-reads the session and gives up if anything changed) remove them from the
 * turn log and the long-term store and write the archive; afterwards remove them from the short-term
 * tier and their vectors (through an outbox table, so a failing vector backend is retried on the next
 * run), and enqueue the archive's embedding.
 *
 * Turn-log rows are deleted, not kept marked archived: the turn log is an outbox plus a record of what
 * the service holds, and an archived turn's text must leave every tier (a kept row would keep the
 * text in the file, be re-enqueued by the reconciler if unfinished, and come back in `export`). The
 * archive's `covers` keeps the ids it replaced.
 *
 * Idempotent: a session with nothing unpinned left is not a candidate, so a second run changes
 * nothing; a retried run finds the first one's work done.
 */
export class Archiver {
  constructor(private readonly deps: ArchiverDeps) {}

  /** The last run (doctor) and the vector deletes still owed to the vector backend. */
  async status(): Promise<{ last_run: ArchiveRun | null; vector_deletes_pending: number }> {
    const [runs, pending] = await Promise.all([this.deps.store.lastRuns(1), this.deps.store.vectorDeletesPending()]);
    return { last_run: runs[0] ?? null, vector_deletes_pending: pending };
  }

  async run(options: ArchiveOptions = {}): Promise<ArchiveReport> {
    const { store, log } = this.deps;
    const now = options.now ?? new Date();
    const days = options.inactiveDays ?? this.deps.inactiveDays;
    const cutoff = new Date(now.getTime() - days * DAY_MS).toISOString();
    const dryRun = options.dryRun ?? false;
    const runId = options.runId ?? `manual-${randomUUID()}`;
    const trigger = options.trigger ?? 'manual';
    const report: ArchiveReport = { run_id: runId, dry_run: dryRun, cutoff, duplicate: false, sessions: [], archived: 0, replaced: 0, failed: 0, vectors_deleted: 0, text_index: null };

    const run = await store.startRun({ run_id: runId, trigger, dry_run: dryRun, cutoff });
    if (run.duplicate) {
      log.info({ run_id: runId }, 'archival occurrence already completed; not running it again');
      return { ...report, duplicate: true };
    }
    try {
      // leftovers of an earlier run whose vector backend failed go first
      if (!dryRun) report.vectors_deleted += await this.drainVectorDeletes();
      const candidates = await store.candidates(cutoff, options.userId);
      options.onProgress?.(0, candidates.length);
      const covered: string[] = [];
      for (const [i, ref] of candidates.entries()) {
        const s = await this.archiveSession(ref, cutoff, dryRun, runId, now);
        report.sessions.push(s.report);
        covered.push(...s.removed);
        options.onProgress?.(i + 1, candidates.length);
      }
      if (!dryRun) {
        report.vectors_deleted += await this.drainVectorDeletes();
        await this.dropFailedJobsOf(covered);
        await this.embedArchivesMissingVectors();
        // the index is everyone's: a run for one user leaves it to the scheduled runs
        if (options.userId === undefined) report.text_index = await this.mergeTextIndex();
      }
      report.archived = report.sessions.filter((s) => s.status === 'archived').length;
      report.failed = report.sessions.filter((s) => s.status === 'failed').length;
      report.replaced = report.sessions.reduce((n, s) => n + (s.status === 'archived' ? s.replaced : 0), 0);
      await store.finishRun(run.seq, {
        outcome: report.failed > 0 ? 'failed' : 'done',
        sessions: report.archived,
        replaced: report.replaced,
        ...(report.failed > 0 ? { error: `${report.failed} session(s) failed` } : {}),
      });
      log.info(
        { run_id: runId, dry_run: dryRun, cutoff, candidates: candidates.length, archived: report.archived, replaced: report.replaced, failed: report.failed, text_index: report.text_index },
        'archival run finished',
      );
      return report;
    } catch (err) {
      await store.finishRun(run.seq, { outcome: 'failed', sessions: report.archived, replaced: report.replaced, error: (err as Error).message });
      throw err;
    }
  }

  /**
   * Merges the text index once a day, after the run's deletes: the pieces the day's commits left are
   * read by every search of every word (docs/architecture.md, maintenance). A failure is the index's,
   * not the archival's: logged, and the next run merges.
   */
  private async mergeTextIndex(): Promise<TextIndexMerge | null> {
    if (!this.deps.textIndex) return null;
    try {
      return await this.deps.textIndex.mergeTextIndex();
    } catch (err) {
      this.deps.log.warn({ err }, 'merging the text index failed; the next archival run merges it');
      return null;
    }
  }

  private async archiveSession(ref: SessionRef, cutoff: string, dryRun: boolean, runId: string, now: Date): Promise<{ report: SessionReport; removed: string[] }> {
    const { store, log } = this.deps;
    const archiveId = archiveIdFor(ref.user_id, ref.session_id);
    // a session's read, summary and write in the process's slices of work (src/pace.ts): a run over
    // 813 real sessions held the event loop 14.5 s in one stretch, no await of it giving a turn
    await room();
    const contents = await store.contents(ref, archiveId);
    await room();
    const items = itemsOf(contents);
    const ids = new Set(items.filter((x) => x.kind !== 'archive').map((x) => x.id));
    const base: SessionReport = {
      user_id: ref.user_id,
      session_id: ref.session_id,
      last_at: contents.ref.last_at,
      archive_id: archiveId,
      status: dryRun ? 'would_archive' : 'archived',
      replaced: ids.size,
      turns: contents.turns.length,
      entries: contents.entries.length,
      pinned_kept: contents.pinned.length,
    };
    if (dryRun) return { report: base, removed: [] };
    try {
      const { text, summarizer } = await this.deps.summarizer.summarize(items, { user_id: ref.user_id, session_id: ref.session_id });
      const archive = buildArchive(archiveId, contents, items, text, summarizer, runId, now);
      await room();
      const result = await store.replace(contents, archive, cutoff);
      if (!result) {
        log.info({ subject: subjectOf(ref.user_id, ref.session_id) }, 'session changed while it was being archived; left for the next run');
        return { report: { ...base, status: 'changed', replaced: 0 }, removed: [] };
      }
      await this.afterReplace(ref, result.archive, result.removed);
      return { report: { ...base, replaced: result.removed.length, summarizer }, removed: result.removed };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log.error({ subject: subjectOf(ref.user_id, ref.session_id), err: error }, 'archiving a session failed; it is left as it was');
      return { report: { ...base, status: 'failed', replaced: 0, error }, removed: [] };
    }
  }

  /** The parts outside the SQLite transaction; each failure here is repaired by a later run. */
  private async afterReplace(ref: SessionRef, archive: MemoryEntry, removed: readonly string[]): Promise<void> {
    const { shortTerm, queue, log } = this.deps;
    try {
      await shortTerm.remove(ref.user_id, ref.session_id, removed);
    } catch (err) {
      // the session's short-term list expires with its TTL; an inactive session's has long expired
      log.warn({ err: (err as Error).message, subject: subjectOf(ref.user_id, ref.session_id) }, 'could not remove archived turns from the short-term tier');
    }
    try {
      await queue.add('embed', [embedJob(archive, archive.kind, archive.content_hash)]);
    } catch (err) {
      log.warn({ err: (err as Error).message, id: archive.id }, 'could not enqueue the archive embedding; the next run re-enqueues it');
    }
  }

  /** Deletes vectors queued in the outbox; returns how many ids were processed. */
  async drainVectorDeletes(): Promise<number> {
    const { store, vectors, log } = this.deps;
    let n = 0;
    for (;;) {
      const page = await store.pendingVectorDeletes(VECTOR_DELETE_BATCH);
      if (page.length === 0) return n;
      const gone = page.filter((p) => !p.live);
      try {
        for (const [userId, refs] of byUser(gone)) await vectors.delete(userId, refs.map((r) => r.id));
      } catch (err) {
        log.warn({ err: (err as Error).message, pending: await store.vectorDeletesPending() }, 'vector backend failed; archived vectors will be deleted on the next run');
        return n;
      }
      await store.vectorDeletesDone(page);
      n += gone.length;
    }
  }

  /** Failed embed jobs of archived turns would bring their vectors back if retried. */
  private async dropFailedJobsOf(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const set = new Set(ids);
    const holds = (data: unknown) => typeof data === 'object' && data !== null && set.has(String((data as { turn_id?: unknown }).turn_id));
    try {
      await Promise.all([this.deps.queue.removeFailed('embed', holds), this.deps.queue.removeFailed('persist', holds)]);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'could not remove failed jobs of archived turns');
    }
  }

  /** Archives whose embedding was never enqueued or failed get it again (the turn log does this for turns). */
  private async embedArchivesMissingVectors(): Promise<void> {
    const embedder = this.deps.embedders.current();
    if (!embedder) return;
    try {
      for await (const page of this.deps.store.archives()) {
        const missing: MemoryEntry[] = [];
        for (const [userId, entries] of byUser(page)) {
          const present = await this.deps.vectors.has(embedder, userId, entries.map((e) => e.id));
          missing.push(...entries.filter((e) => !present.has(e.id)));
        }
        if (missing.length > 0) await this.deps.queue.add('embed', missing.map((e) => embedJob(e, e.kind, e.content_hash)));
      }
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'could not check archives for missing vectors');
    }
  }
}

/** The session's items in time order, one per id: an entry wins over its turn-log row (it carries edits and the score). */
function itemsOf(c: SessionContents): ArchiveItem[] {
  const byId = new Map<string, ArchiveItem>();
  for (const t of c.turns) {
    byId.set(t.id, {
      id: t.id,
      role: t.role,
      name: t.name,
      kind: 'turn',
      content: t.content,
      created_at: t.created_at,
      importance: t.importance ?? scoreImportance(t.content, t.role),
    });
  }
  for (const e of c.entries) {
    byId.set(e.id, { id: e.id, role: e.role, name: e.name, kind: e.kind, content: e.content, created_at: e.created_at, importance: e.importance });
  }
  const items = [...byId.values()].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  if (c.previous) {
    const p = c.previous;
    items.unshift({ id: p.id, role: p.role, name: p.name, kind: 'archive', content: p.content, created_at: p.created_at, importance: p.importance });
  }
  return items;
}

function buildArchive(id: string, c: SessionContents, items: readonly ArchiveItem[], summary: string, summarizer: string, runId: string, now: Date): MemoryEntry {
  const own = items.filter((x) => x.kind !== 'archive');
  const first = (c.previous?.metadata?.archive as { first_at?: string } | undefined)?.first_at ?? own[0]?.created_at ?? c.ref.last_at;
  const turnsBefore = Number((c.previous?.metadata?.archive as { turns?: number } | undefined)?.turns ?? 0);
  const turnCount = turnsBefore + own.filter((x) => x.kind === 'turn').length;
  const content = `${ARCHIVE_HEADING}, ${first.slice(0, 10)} to ${c.ref.last_at.slice(0, 10)} (${turnCount} turns):\n${summary.trim()}`;
  const covers = [...new Set([...(c.previous?.covers ?? []), ...own.map((x) => x.id)])].sort();
  return {
    id,
    user_id: c.ref.user_id,
    session_id: c.ref.session_id,
    role: 'system',
    name: null,
    kind: 'archive',
    content,
    content_hash: contentHash(content),
    importance: Math.max(0, ...items.map((x) => x.importance)),
    pinned: false,
    metadata: { archive: { first_at: first, last_at: c.ref.last_at, turns: turnCount, summarizer, run_id: runId, archived_at: now.toISOString() } },
    covers,
    // the session's last activity, so the archive neither looks new nor makes the session active again
    created_at: c.ref.last_at,
    updated_at: now.toISOString(),
  };
}

