import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../logger.js';
import { siblingThread } from '../thread.js';
import type { Db } from './db.js';

/** the write-ahead log's size past which it is checkpointed: SQLite's own auto-checkpoint, 1,000 pages of 4 KiB */
export const CHECKPOINT_FROM_BYTES = 4 * 1024 * 1024;
/** how often the log's size is looked at */
const LOOK_EVERY_MS = 200;

export type CheckpointReply = { ok: true; busy: boolean; frames: number; checkpointed: number } | { ok: false; message: string };

/**
 * Checkpoints of the SQLite file's write-ahead log on a thread of their own. SQLite's auto-checkpoint
 * runs in the connection whose commit takes the log past 1,000 pages, inside that commit: on the
 * event loop, 20–60 ms a time under the writes of an archival run or a long batch (22–38 commits over
 * 20 ms in one archival run of 813 sessions; 0–2 with the checkpoints on a thread). The store's
 * connection does not checkpoint (`wal_autocheckpoint = 0`): every LOOK_EVERY_MS, once the log's file
 * has passed CHECKPOINT_FROM_BYTES and was written since the last checkpoint was asked, a PASSIVE
 * checkpoint (as far as readers allow, never waiting for a writer) is asked of a thread holding its own
 * connection, started then and kept. The next writer restarts the log once it is wholly copied back
 * and no reader is in it. The file is not cut short (`journal_size_limit`): with the cut, the
 * writer's commits were held 100–240 ms in the same archival run. If the thread cannot be started or ends, the connection
 * checkpoints as SQLite does by default again.
 */
export class WalCheckpoints {
  /** checkpoints the thread ran (tests) */
  done = 0;
  /** frames of the log not yet copied back when the last checkpoint ended */
  behind = 0;
  private worker: Worker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private asked = false;
  /** when the last checkpoint was asked (epoch ms, as the file's modification time) */
  private askedAt = 0;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly path: string,
    private readonly log?: Logger,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    this.timer = setInterval(() => this.look(), LOOK_EVERY_MS);
    // never what keeps a process alive
    this.timer.unref();
  }

  /** Stops looking and ends the thread; the connection's own close checkpoints what is left. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private look(): void {
    if (this.asked || this.stopped) return;
    let bytes: number;
    let written: number;
    try {
      ({ size: bytes, mtimeMs: written } = statSync(`${this.path}-wal`));
    } catch {
      return; // no log yet, or the file is gone (its store is closing)
    }
    if (bytes <= CHECKPOINT_FROM_BYTES || written <= this.askedAt) return;
    this.asked = true;
    this.askedAt = Date.now();
    this.thread().postMessage('checkpoint');
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = siblingThread(import.meta.url, 'checkpoint-worker', { workerData: { path: this.path } });
    this.worker = worker;
    worker.on('message', (r: CheckpointReply) => {
      this.asked = false;
      // a checkpoint that failed (a full disk, say) is asked again after the next write
      if (!r.ok) return this.log?.debug({ err: r.message }, 'write-ahead log checkpoint failed');
      if (r.busy) return;
      this.done++;
      this.behind = r.frames - r.checkpointed;
    });
    worker.on('error', (err) => this.fallBack(err.message));
    worker.on('exit', () => this.fallBack('the checkpoint thread exited'));
    worker.unref();
    return worker;
  }

  /** the connection checkpoints in its commits again, as SQLite does by default */
  private fallBack(reason: string): void {
    if (this.stopped) return;
    void this.stop();
    try {
      this.db.pragma('wal_autocheckpoint = 1000');
    } catch {
      return; // the connection is closed: nothing left to checkpoint
    }
    this.log?.warn({ err: reason }, 'write-ahead log checkpoints run in the store connection again');
  }
}
