import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startCli, stop } from '../../helpers/cli.js';
import { startFakeQdrant, type FakeQdrant } from '../../helpers/fake-qdrant.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, until } from './helpers.js';

/** every file under `dir`, relative to it */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** the turn ids of every point in the fake Qdrant, whatever the collection */
function pointTurnIds(qdrant: FakeQdrant): Set<string> {
  const ids = new Set<string>();
  for (const c of qdrant.collections().values()) for (const p of c.points.values()) ids.add(String(p.payload.turn_id));
  return ids;
}

/**
 * docs/architecture.md, embed workers without the durable store: `serve` holds the SQLite file in one
 * folder; `neuralcleave worker --queues embed` runs in another, empty folder with the same Redis and
 * Qdrant (the fake server of test/helpers/fake-qdrant.ts), and opens no SQLite file: the embed job
 * carries the text, the vectors go to Qdrant, and a turn deleted before its job runs is checked
 * through the tombstones in Redis, so it gets no point.
 */
describe('embed-only worker (fake Qdrant, real Redis): no SQLite file in its folder', () => {
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let qdrant: FakeQdrant;
  before(async () => {
    redis = await startRedis();
    qdrant = await startFakeQdrant();
  });
  after(async () => {
    killAll(children);
    await qdrant.stop();
    await redis.stop(true);
  });

  it('embeds the turns accepted by serve into the fake Qdrant, skips a deleted one, and writes no *.db', { timeout: 120_000 }, async () => {
    const serveDir = tmpDir();
    const workerDir = tmpDir();
    const shared = {
      NEURALCLEAVE_REDIS_URL: redis.url,
      NEURALCLEAVE_REDIS_PREFIX: 'embed-only',
      NEURALCLEAVE_QDRANT_URL: qdrant.url,
      NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
      NEURALCLEAVE_LOG_LEVEL: 'warn',
    };
    const served = await startCli(['serve'], { ...shared, NEURALCLEAVE_SQLITE_PATH: join(serveDir, 'nc.db'), NEURALCLEAVE_PORT: '0' }, /listening on (http:\/\/\S+)/, 30_000, { cwd: serveDir });
    children.add(served.child);
    const base = served.match[1]!;

    const turns = Array.from({ length: 20 }, (_, i) => ({ id: `eo-${i}`, user_id: 'ann', role: i % 2 ? 'assistant' : 'user', content: `embed-only note ${i}: the ferry leaves pier ${i} at ${i + 6} o'clock` }));
    const posted = await fetch(`${base}/sessions/eo-session/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ turns }) });
    assert.equal(posted.status, 202, await posted.text());
    // deleted while its embed job waits for a worker: the worker must not bring its vector back
    const deleted = await fetch(`${base}/memory/eo-3?user_id=ann`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.text());
    assert.equal(pointTurnIds(qdrant).size, 0, 'serve runs no workers with Redis: nothing is embedded before the worker starts');

    const worker = await startCli(['worker', '--queues', 'embed'], { ...shared }, /worker ready/, 30_000, { cwd: workerDir });
    children.add(worker.child);
    const expected = turns.map((t) => t.id).filter((id) => id !== 'eo-3');
    await until('every kept turn to get its point in the fake Qdrant', () => expected.every((id) => pointTurnIds(qdrant).has(id)), 60_000, 100);
    // the deleted turn's job was removed by the delete (memoryJobIds); the others ran (the queue is drained)
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const embedQueue = new Queue('embed', { connection, prefix: 'embed-only:bull' });
    try {
      await until('the embed queue to drain', async () => {
        const c = await embedQueue.getJobCounts('waiting', 'active', 'delayed');
        // completed embed jobs are not kept (FORGOTTEN_ON_COMPLETE): the workers' metric counts them
        const completed = (await embedQueue.getMetrics('completed', 0, 0)).meta.count;
        return c.waiting === 0 && c.active === 0 && c.delayed === 0 && completed === expected.length;
      }, 30_000, 100);
    } finally {
      await embedQueue.close();
      connection.disconnect();
    }
    assert.equal(pointTurnIds(qdrant).has('eo-3'), false, 'the turn deleted before its job ran has no point');
    assert.deepEqual([...pointTurnIds(qdrant)].sort(), [...expected].sort());

    assert.equal(await stop(worker.child), 0);
    const files = filesUnder(workerDir);
    assert.deepEqual(files.filter((f) => f.endsWith('.db') || f.includes('.db-')), [], `no SQLite file in the worker's folder (found: ${files.join(', ') || 'nothing'})`);
    assert.equal(await stop(served.child), 0);
  });
});
