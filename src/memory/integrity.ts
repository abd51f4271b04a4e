import { embedJob } from '../../queues/producers.js';
import type { DurableStore } from '../ports/durable-store.js';
import type { LongTermStore } from '../ports/long-term.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { TurnLog } from '../ports/turn-log.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { JobQueue } from '../../queues/queue.js';
import type { Reconciler } from './reconciler.js';
import { byUser } from '../domain/refs.js';
import type { DuplicateGroup, Found, MaintenanceStore } from '../ports/maintenance.js';

/** What the checks read and the repairs write: the store's maintenance port, the tiers, the reconciler. */
export interface IntegrityDeps {
  store: Pick<DurableStore, 'maintenance'>;
  turnLog: TurnLog;
  longTerm: LongTermStore;
  shortTerm: ShortTermStore;
  vectors: VectorIndex;
  queue: JobQueue;
  reconciler: Pick<Reconciler, 'run'>;
}

/** One finding of `doctor`: how many, and the first few (owner and id, for the operator). */
export interface Finding {
  count: number;
  sample: Array<{ user_id: string; id: string }>;
}

export interface IntegrityReport {
  /** entries of kind turn without a live turn-log row (written after a delete) */
  orphan_entries: Finding;
  /** embedded-index vectors whose memory is gone */
  orphan_vectors: Finding;
  /** short-term copies of turns that are gone */
  orphan_short_term: Finding;
  /** entries or vectors whose text is not their memory's now */
  stale: Finding;
  /** turns whose embed or persist job has not completed after `unfinished_after_s` */
  unfinished: Finding;
  unfinished_after_s: number;
  /** equal text under several ids of one user: kept by design (each id is its own memory), listed only */
  duplicate_content: { groups: number; sample: DuplicateGroup[] };
  /** what the vector check covered: the embedded index is read; Qdrant's points are not listed */
  vectors_checked: boolean;
  /**
   * whether the short-term tier read is the one every process uses (Redis); false: the in-process
   * tier of the process running the check, which cannot see a running `serve`'s own
   */
  short_term_shared: boolean;
  /** findings that are defects (every one but duplicate_content) */
  problems: number;
  /** what --repair did, when asked */
  repaired: { removed: number; realigned: number; requeued: number } | null;
}

export interface IntegrityOptions {
  repair?: boolean;
  /** a turn pending longer than this is "unfinished" (default 600 s: well past the reconciler's passes) */
  unfinishedAfterMs?: number;
}

const SAMPLE = 5;
const finding = (found: readonly Found[]): Finding => ({ count: found.length, sample: found.slice(0, SAMPLE).map((f) => ({ user_id: f.user_id, id: f.id })) });

/**
 * The integrity checks of `doctor`: what must never exist — long-term entries, vectors and short-term
 * copies of memories that were deleted (the turn log is the record of what exists), text that differs
 * between tiers, turns whose jobs never finished — and what may surprise an operator (equal text
 * under several ids). `repair` removes the orphans, realigns stale copies with their turn, and
 * re-enqueues unfinished jobs (run here when the queue is in-process); then it checks again.
 */
export async function checkIntegrity(s: IntegrityDeps, options: IntegrityOptions = {}): Promise<IntegrityReport> {
  const afterMs = options.unfinishedAfterMs ?? 600_000;
  let report = await inspect(s, afterMs);
  if (!options.repair || report.problems === 0) return report;
  const repaired = await repair(s, afterMs);
  report = await inspect(s, afterMs);
  return { ...report, repaired };
}

async function inspect(s: IntegrityDeps, afterMs: number): Promise<IntegrityReport> {
  const sql = s.store.maintenance;
  const vectorsChecked = s.vectors.backend === 'embedded';
  const orphanShortTerm = await shortTermOrphans(s, sql);
  const stale = [...(await sql.staleEntries()), ...(vectorsChecked ? await sql.staleVectors() : [])];
  const report: IntegrityReport = {
    orphan_entries: finding(await sql.orphanEntries()),
    orphan_vectors: finding(vectorsChecked ? await sql.orphanVectors() : []),
    orphan_short_term: finding(orphanShortTerm),
    stale: finding(stale),
    unfinished: finding(await sql.unfinished(Date.now() - afterMs)),
    unfinished_after_s: Math.round(afterMs / 1000),
    duplicate_content: await sql.duplicateContent(),
    vectors_checked: vectorsChecked,
    short_term_shared: s.shortTerm.backend === 'redis',
    problems: 0,
    repaired: null,
  };
  report.problems = report.orphan_entries.count + report.orphan_vectors.count + report.orphan_short_term.count + report.stale.count + report.unfinished.count;
  return report;
}

/** every session the tier holds, whoever its user: one whose every memory was deleted has no rows left to find it by */
async function shortTermOrphans(s: IntegrityDeps, sql: MaintenanceStore): Promise<Found[]> {
  const out: Found[] = [];
  for (const { user_id, session_id } of await s.shortTerm.everySession()) {
    for (const t of await s.shortTerm.recent(user_id, session_id)) if (!(await sql.live(user_id, t.id))) out.push({ user_id, id: t.id, session_id });
  }
  return out;
}

async function repair(s: IntegrityDeps, afterMs: number): Promise<{ removed: number; realigned: number; requeued: number }> {
  const sql = s.store.maintenance;
  // everything is listed first: removing an orphan entry must not hide its vector from the count
  const entries = await sql.orphanEntries();
  const vectors = s.vectors.backend === 'embedded' ? await sql.orphanVectors() : [];
  for (const [user, found] of byUser(entries)) {
    await s.longTerm.delete(user, found.map((f) => f.id));
    for (const f of found) await s.shortTerm.remove(user, f.session_id, [f.id]);
  }
  for (const [user, found] of byUser(vectors)) await s.vectors.delete(user, found.map((f) => f.id));
  let removed = entries.length + vectors.length;
  for (const f of await shortTermOrphans(s, sql)) removed += await s.shortTerm.remove(f.user_id, f.session_id, [f.id]);

  let realigned = 0;
  for (const f of await sql.staleEntries()) {
    await sql.realign(f.user_id, f.id);
    await s.vectors.delete(f.user_id, [f.id]);
    realigned++;
  }
  if (s.vectors.backend === 'embedded') {
    for (const f of await sql.staleVectors()) {
      await s.vectors.delete(f.user_id, [f.id]);
      await sql.markUnembedded(f.user_id, f.id);
      // a summary or archive has no turn-log row to re-embed it from: its embed job is enqueued here
      const entry = (await s.turnLog.get(f.user_id, f.id)) ? null : await s.longTerm.get(f.user_id, f.id);
      if (entry) await s.queue.add('embed', [embedJob(entry, entry.kind, entry.content_hash)]);
      realigned++;
    }
  }

  // unfinished jobs (and the turns realigned above) are enqueued again; the in-process queue runs them now
  const requeued = (await sql.unfinished(Date.now() - afterMs)).length;
  await s.reconciler.run(Date.now());
  if (s.queue.backend === 'in-process') await s.queue.idle();
  return { removed, realigned, requeued };
}
