// The thread of mergeTextIndexOnThread: its own connection to the file, one merge, then the thread ends.
import { parentPort, workerData } from 'node:worker_threads';
import { openThreadWriter } from './db.js';
import { mergeTextIndexSync, type MergeReply } from './text-index-merge.js';

const { path } = workerData as { path: string };
let reply: MergeReply;
try {
  const db = openThreadWriter(path);
  try {
    reply = { ok: true, merge: mergeTextIndexSync(db) };
  } finally {
    db.close();
  }
} catch (err) {
  reply = { ok: false, message: (err as Error).message };
}
parentPort!.postMessage(reply);
