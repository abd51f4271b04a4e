import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openSqliteStore } from '../../../../src/adapters/sqlite/open.js';
import { tmpDir } from '../../../helpers/tmp.js';

/** Another process holds the file's write lock for `ms`; resolves once it holds it (`exited`: once it let go). */
async function holdWriteLock(path: string, ms: number): Promise<{ exited: Promise<unknown> }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(${JSON.stringify(path)});
       db.pragma('busy_timeout = 10000');
       db.exec('BEGIN IMMEDIATE');
       db.exec('CREATE TABLE IF NOT EXISTS lock_probe (x)');
       process.stdout.write('locked\\n');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
       db.exec('COMMIT');
       db.close();`,
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = once(child, 'exit');
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    if (out.includes('locked')) break;
  }
  return { exited };
}

/**
 * Issue 26 (the 503 busy answers of erasures under contention): a delete's scrub of the write-ahead
 * log waits only briefly for the other connections (LOG_SCRUB_WAIT_MS); that short wait must not
 * reach the statements other requests of the process run meanwhile, which wait the busy timeout.
 */
describe('SQLite scrubLog', () => {
  it("a write started while a scrub is settling waits the store's busy timeout, not the scrub's", { timeout: 30_000 }, async () => {
    const path = join(tmpDir(), 'nc.db');
    const store = await openSqliteStore(path);
    try {
      await store.turnLog.delete('u', ['t']); // the log holds a frame to checkpoint
      const { exited } = await holdWriteLock(path, 400);
      // a request's continuation queued before the scrub's own (another delete resuming on the same reply)
      let write: Promise<number> | undefined;
      queueMicrotask(() => {
        write = store.turnLog.delete('u', ['t']);
      });
      await store.erasure.scrubLog();
      assert.equal(await write, 0, 'the write waited for the lock instead of answering busy');
      await exited;
    } finally {
      await store.close();
    }
  });
});
