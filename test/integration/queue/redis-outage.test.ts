import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { wire, type Services } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import { Memory } from '../../../src/memory/memory.js';
import { startCli } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { silentLogger } from '../../helpers/services.js';
import { tmpDir } from '../../helpers/tmp.js';
import { assertEachProcessedOnce, killAll, makeTurns, processedTurns, queueEnv, until } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * docs/architecture.md, deployment and backends and write path, Redis lost while running: the producer (this process, through the library API) keeps
 * accepting turns into the turn log while Redis is down — the short-term write and the enqueue
 * degrade without failing the write — and when Redis is back (empty: it persists nothing) the
 * reconciler drains the turn log onto the queues and two worker processes finish every turn.
 */
describe('BullMQ: Redis stopped while turns are written, then started again', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let services: Services | undefined;
  let stopWriting = async () => {};

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await stopWriting().catch(() => {});
    killAll(children);
    await services?.close();
    await redis.stop(true);
  });

  it('loses no acknowledged turn, and the queues drain', { timeout: 120_000 }, async () => {
    const env = queueEnv({ redisUrl: redis.url, sqlitePath: dbPath });
    for (let i = 0; i < 2; i++) {
      const w = await startCli(['worker', '--queues', 'embed,persist', '--concurrency', '8'], env, /worker ready/);
      children.add(w.child);
    }
    const config = parseConfig({
      redis_url: redis.url,
      sqlite_path: dbPath,
      embedding_model: 'hash',
      log_level: 'silent',
      redis_command_timeout_ms: 1000,
      // the reconciler re-enqueues what the outage lost within seconds
      reconcile_interval_s: 1,
      reconcile_after_s: 1,
    });
    services = await wire(config, { logger: silentLogger() });
    const memory = new Memory(services);
    assert.equal(services.queue.backend, 'bullmq');
    assert.equal(services.shortTerm.backend, 'redis');

    const acknowledged: string[] = [];
    let batches = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const r = await memory.addTurns(makeTurns(20, `b${batches++}`));
        acknowledged.push(...r.ids);
        await sleep(25);
      }
    })();
    stopWriting = async () => {
      writing = false;
      await writer;
    };

    await until('some turns written with Redis up', () => acknowledged.length >= 200, 30_000, 20);
    await redis.stop();
    await until('the service to notice Redis is gone', () => services!.backends().queue.state === 'down', 10_000, 20);
    const before = acknowledged.length;
    await until('turns acknowledged while Redis is down', () => acknowledged.length >= before + 200, 30_000, 20);
    assert.equal(services.backends().short_term.state, 'down');
    // retrieval goes on without the short-term tier
    const during = await memory.retrieve({ query: 'courier parcel dock', user_id: 'user-1', session_id: 'b0-session-1' });
    assert.notEqual(during.tiers.short_term.status, 'ok');
    assert.equal(during.tiers.long_term.status, 'ok');

    await redis.start();
    await until('the connection to come back', () => services!.backends().queue.state === 'ok', 30_000, 50);
    const after = acknowledged.length;
    await until('more turns written after Redis is back', () => acknowledged.length >= after + 100, 30_000, 20);
    await stopWriting();

    await until(`all ${acknowledged.length} acknowledged turns to be processed`, () => processedTurns(dbPath) === acknowledged.length, 90_000, 200);
    assertEachProcessedOnce(dbPath, acknowledged);
    await until('the queues to drain', async () => {
      const c = await services!.queue.counts();
      return (['embed', 'persist'] as const).every((q) => c[q].waiting + c[q].active + c[q].delayed === 0);
    }, 30_000, 100);
    const counts = await services.queue.counts();
    assert.equal(counts.embed.failed + counts.persist.failed, 0, 'no job failed');
  });
});
