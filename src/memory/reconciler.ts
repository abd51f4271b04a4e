import { byUser } from '../domain/refs.js';
import type { Turn } from '../domain/turn.js';
import type { EmbedderProvider } from '../embedding/provider.js';
import type { Logger } from '../logger.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { TurnLog } from '../ports/turn-log.js';
import type { VectorIndex } from '../ports/vector-index.js';
import type { WritePath } from './write-path.js';

export interface ReconcilerDeps {
  turnLog: TurnLog;
  writePath: WritePath;
  vectors: VectorIndex;
  embedders: EmbedderProvider;
  log: Logger;
  /** the start-up pass writes unfinished turns here too (see `start`); without it, it does not */
  shortTerm?: ShortTermStore;
}

const BATCH = 1000;

/**
 * Re-enqueues turns whose jobs have not completed: at start-up (everything pending) and then
 * periodically (pending for longer than `afterMs`). Job ids are deterministic, so a job that is still
 * queued is not duplicated; processors are idempotent, so one that runs twice changes nothing. A job
 * that failed for good (attempts used up, or stalled twice: its workers killed while running it) is
 * replaced (JobQueue.requeue): as long as its turn is pending, its work is retried.
 *
 * The start-up pass also writes the unfinished turns to the short-term tier (a push ignores ids the
 * session already holds). A process killed between the turn log and the short-term write leaves turns
 * that are durable but in no session's recent turns; the client's retry finds them already logged (a
 * duplicate, which the write path does not write again), so without this the retry's 202 would not
 * mean "the next retrieve in this session sees it" (docs/architecture.md, write path). Later passes do not: a turn pending
 * for a minute may have been trimmed or compacted out of its session since, on purpose.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * The start-up pass over everything pending, then a pass every `intervalMs` over what has been
   * pending for `afterMs`. Embeds need the model: the start-up pass waits briefly for one still
   * loading (the built-in embedder is ready at once), so a restart reports its re-enqueued turns in
   * one line; a model that takes longer gets its embeds re-enqueued (and reported) once it has loaded.
   */
  start(intervalMs: number, afterMs: number, embedderGraceMs = 200): void {
    const startedAt = Date.now();
    const { embedders } = this.deps;
    void (async () => {
      await Promise.race([embedders.ready(), new Promise((r) => setTimeout(r, embedderGraceMs).unref())]);
      if (this.timer === null) return; // stopped meanwhile
      await this.run(startedAt, { shortTerm: true });
      if (embedders.current() || !(await embedders.ready()) || this.timer === null) return;
      await this.run(startedAt, { only: 'embed' });
    })();
    this.timer = setInterval(() => void this.run(Date.now() - afterMs), intervalMs);
    this.timer.unref();
  }

  /**
   * One pass over turns accepted at or before `acceptedBefore`; returns how many were re-enqueued.
   * `shortTerm`: write them to the short-term tier as well (the start-up pass).
   */
  run(acceptedBefore: number, options: { shortTerm?: boolean; only?: 'embed' } = {}): Promise<number> {
    // passes run one after another, never two at once over the same rows
    const next: Promise<number> = (this.running ?? Promise.resolve(0)).then(() => this.pass(acceptedBefore, options.shortTerm ?? false, options.only === 'embed'));
    this.running = next;
    void next.finally(() => {
      if (this.running === next) this.running = null;
    });
    return next;
  }

  private async pass(acceptedBefore: number, restoreShortTerm: boolean, embedOnly: boolean): Promise<number> {
    const { turnLog, writePath, vectors, embedders, log, shortTerm } = this.deps;
    let requeued = 0;
    if (restoreShortTerm && shortTerm) await this.restoreShortTerm(shortTerm, acceptedBefore);
    try {
      for await (const page of embedOnly ? [] : turnLog.pending('persist', acceptedBefore, BATCH)) {
        if (!(await writePath.enqueue(page, { embed: false, persist: true }, 'requeue'))) return requeued;
        requeued += page.length;
      }
      const embedder = embedders.current();
      if (embedder) {
        for await (const page of turnLog.pending('embed', acceptedBefore, BATCH)) {
          // an embed worker on another host writes vectors without touching this file: record those
          const missing: Turn[] = [];
          for (const [userId, turns] of byUser(page)) {
            const present = await vectors.has(embedder, userId, turns.map((t) => t.id));
            if (present.size > 0) (await turnLog.markEmbedded(userId, [...present], embedder.id));
            missing.push(...turns.filter((t) => !present.has(t.id)));
          }
          if (missing.length === 0) continue;
          if (!(await writePath.enqueue(missing, { embed: true, persist: false }, 'requeue'))) return requeued;
          requeued += missing.length;
        }
      }
      if (requeued > 0) log.info({ requeued }, embedOnly ? 're-enqueued the embedding of unfinished turns, now that the model has loaded' : 're-enqueued unfinished turns from the turn log');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'reconcile pass failed; will retry');
    }
    return requeued;
  }

  /** Writes every unfinished turn to the short-term tier, in acceptance order; a failure is logged, never thrown. */
  private async restoreShortTerm(shortTerm: ShortTermStore, acceptedBefore: number): Promise<void> {
    try {
      for await (const page of this.deps.turnLog.pending('any', acceptedBefore, BATCH)) await shortTerm.push(page);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, backend: shortTerm.backend }, 'unfinished turns could not be written to the short-term tier at start-up');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
