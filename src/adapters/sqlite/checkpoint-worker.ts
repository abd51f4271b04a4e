// The worker thread of WalCheckpoints: a connection of its own to the SQLite file, which checkpoints
// the write-ahead log when asked (PASSIVE: as far as readers allow, never waiting for a writer).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointReply } from './checkpoints.js';

const { path } = workerData as { path: string };
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const port = parentPort!;

port.on('message', () => {
  let reply: CheckpointReply;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    reply = { ok: true, busy: r!.busy === 1, frames: r!.log, checkpointed: r!.checkpointed };
  } catch (err) {
    reply = { ok: false, message: (err as Error).message };
  }
  port.postMessage(reply);
});
