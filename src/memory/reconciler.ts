import type { EmbedderProvider } from '../embedding/provider.js';
import type { Logger } from '../logger.js';
import type { TurnLog } from '../tiers/sqlite/turn-log.js';
import type { VectorIndex } from '../tiers/vector-index.js';
import type { WritePath } from './write-path.js';

export interface ReconcilerDeps {
  turnLog: TurnLog;
  writePath: WritePath;
  vectors: VectorIndex;
  embedders: EmbedderProvider;
  log: Logger;
}

const BATCH = 1000;

/**
 * Re-enqueues turns whose jobs have not completed: at start-up (everything pending) and then
 * periodically (pending for longer than `afterMs`). Job ids are deterministic, so a job that is still
 * queued is not duplicated; processors are idempotent, so one that runs twice changes nothing.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly deps: ReconcilerDeps) {}

  start(intervalMs: number, afterMs: number): void {
    void this.run(Date.now());
    this.timer = setInterval(() => void this.run(Date.now() - afterMs), intervalMs);
    this.timer.unref();
  }

  /** One pass over turns accepted at or before `acceptedBefore`; returns how many were re-enqueued. */
  run(acceptedBefore: number): Promise<number> {
    // passes run one after another, never two at once over the same rows
    const next: Promise<number> = (this.running ?? Promise.resolve(0)).then(() => this.pass(acceptedBefore));
    this.running = next;
    void next.finally(() => {
      if (this.running === next) this.running = null;
    });
    return next;
  }

  private async pass(acceptedBefore: number): Promise<number> {
    const { turnLog, writePath, vectors, embedders, log } = this.deps;
    let requeued = 0;
    try {
      for (const page of turnLog.pending('persist', acceptedBefore, BATCH)) {
        if (!(await writePath.enqueue(page, { embed: false, persist: true }))) return requeued;
        requeued += page.length;
      }
      const embedder = embedders.current();
      if (embedder) {
        for (const page of turnLog.pending('embed', acceptedBefore, BATCH)) {
          // an embed worker on another host writes vectors without touching this file: record those
          const present = await vectors.has(embedder, page.map((t) => t.id));
          if (present.size > 0) turnLog.markEmbedded([...present], embedder.id);
          const missing = page.filter((t) => !present.has(t.id));
          if (missing.length === 0) continue;
          if (!(await writePath.enqueue(missing, { embed: true, persist: false }))) return requeued;
          requeued += missing.length;
        }
      }
      if (requeued > 0) log.info({ requeued }, 're-enqueued unfinished turns from the turn log');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'reconcile pass failed; will retry');
    }
    return requeued;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
