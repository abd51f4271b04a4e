import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { CHECKPOINT_FROM_BYTES, type WalCheckpoints } from '../../../../src/adapters/sqlite/checkpoints.js';
import { openSqliteStore } from '../../../../src/adapters/sqlite/open.js';
import { contentHash } from '../../../../src/domain/hash.js';
import type { Turn } from '../../../../src/domain/turn.js';
import { capturingLogger } from '../../../helpers/services.js';
import { tmpDir } from '../../../helpers/tmp.js';

/**
 * SQLite checkpoints the write-ahead log inside the commit that takes it past 1,000 pages, on the
 * connection that commits: for a store, on the event loop (20–50 ms a time under an archival run's or
 * a long batch's writes). The store's connection leaves that to a thread of its own; the log must still
 * be copied back and kept short.
 */

/** `n` turns of about 30,000 characters, each text its own */
function longTurns(from: number, n: number): Turn[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const content = Array.from({ length: 3_000 }, (_, w) => `w${(i * 7_919 + w * 104_729) % 1_000_003}`).join(' ').slice(0, 30_000);
    return { id: `t${i}`, user_id: 'u', session_id: 's', role: 'user', name: null, content, content_hash: contentHash(content), created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), importance: null, pinned: false, metadata: null };
  });
}

async function until(what: string, done: () => boolean, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) assert.fail(`${what} within ${ms} ms`);
  }
}

const walBytes = (path: string) => statSync(`${path}-wal`).size;

describe('SQLite store: write-ahead log checkpoints off the event loop', () => {
  it("are not run in the store connection's commits; the thread copies the log back and the log is reused", async () => {
    const path = join(tmpDir(), 'checkpoints.db');
    const store = await openSqliteStore(path);
    const checkpoints = store.checkpoints!;
    assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 0, 'the connection does not checkpoint in its commits');
    // about 9 MB of turns, in commits of 10: past the point where a checkpoint is asked
    const burst = async (from: number) => {
      for (let i = from; i < from + 300; i += 10) await store.turnLog.append(longTurns(i, 10));
    };
    await burst(0);
    await until('the log copied back whole by the thread', () => checkpoints.done > 0 && checkpoints.behind === 0);
    const after = walBytes(path);
    assert.ok(after > CHECKPOINT_FROM_BYTES, `${after} bytes of log`);
    // the same writes again start the log anew rather than grow it
    const before = checkpoints.done;
    await burst(1_000);
    assert.ok(walBytes(path) <= after * 1.1, `the log grew from ${after} to ${walBytes(path)} bytes`);
    await until('the second burst copied back', () => checkpoints.done > before && checkpoints.behind === 0);
    assert.equal((await store.turnLog.counts()).total, 600);
    await store.close();
  });

  it('fall back to the connection checkpointing in its commits when the thread fails', async () => {
    const path = join(tmpDir(), 'checkpoints-fallback.db');
    const { logger, lines } = capturingLogger('warn');
    const store = await openSqliteStore(path, logger);
    const checkpoints = store.checkpoints!;
    for (let i = 0; i < 200; i += 10) await store.turnLog.append(longTurns(i, 10));
    await until('the thread started', () => (checkpoints as unknown as { worker: Worker | null }).worker !== null);
    // ended from outside, as a crash would end it
    await (checkpoints as unknown as { worker: Worker }).worker.terminate();
    await until('the fallback', () => store.db.pragma('wal_autocheckpoint', { simple: true }) === 1000);
    assert.ok(lines().some((l) => l.msg === 'write-ahead log checkpoints run in the store connection again'), JSON.stringify(lines()));
    await store.close();
  });

  it('are not started for an in-memory database', async () => {
    const store = await openSqliteStore(':memory:');
    assert.equal(store.checkpoints, null as WalCheckpoints | null);
    await store.close();
  });
});
