// The worker thread of TextSearchThread: a read-only connection to the SQLite file and the long-term
// store's own searchText over it, one call at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { openSearchConnection } from './db.js';
import { SqliteLongTermStore } from './long-term.js';
import type { TextSearchCall, TextSearchReply } from './text-search-thread.js';

const { path, up } = workerData as { path: string; up: Int32Array };
const db = openSearchConnection(path);
const store = new SqliteLongTermStore(db, undefined, { textSearchThread: false });
const port = parentPort!;

port.on('message', (call: TextSearchCall) => {
  let reply: TextSearchReply;
  try {
    reply = { id: call.id, ok: true, hits: store.searchTextSync(call.userId, call.query, call.options) };
  } catch (err) {
    reply = { id: call.id, ok: false, message: (err as Error).message };
  }
  port.postMessage(reply);
});
Atomics.store(up, 0, 1);
// a warm() waiting for it (TextSearchThread.warm)
Atomics.notify(up, 0);
