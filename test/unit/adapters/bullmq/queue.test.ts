import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { BullMqQueue, type BullMqQueueOptions } from '../../../../src/adapters/bullmq/queue.js';
import type { EmbedJob } from '../../../../queues/payloads.js';
import { ValidationError } from '../../../../src/errors.js';
import { connectRedis } from '../../../../src/adapters/redis/connection.js';
import { startRedis, type RedisHandle } from '../../../helpers/redis.js';

const log = pino({ level: 'silent' });

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function embedJob(turnId: string, content = `text of ${turnId}`): EmbedJob {
  return { turn_id: turnId, user_id: 'u', session_id: 's', role: 'user', name: null, kind: 'turn', content, content_hash: 'h', created_at: new Date(0).toISOString() };
}

describe('BullMqQueue', () => {
  let redis: RedisHandle;
  const clients: Redis[] = [];
  const queues: BullMqQueue[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(queues.map((q) => q.close()));
    for (const c of clients) c.disconnect();
    await redis.stop();
  });

  async function connection(): Promise<Redis> {
    const probe = await connectRedis(redis.url, { connectTimeoutMs: 2000, commandTimeoutMs: 2000 }, log);
    if (!probe.ok) throw new Error(probe.reason);
    clients.push(probe.client);
    return probe.client;
  }

  /** a queue on its own key prefix, so tests do not see each other's jobs */
  async function makeQueue(options: Partial<BullMqQueueOptions> = {}, prefix = `t-${randomUUID()}`): Promise<{ queue: BullMqQueue; prefix: string; conn: Redis }> {
    const conn = options.connection ?? (await connection());
    const queue = await BullMqQueue.create({ connection: conn, prefix, log, backoffMs: 20, ...options });
    queues.push(queue);
    return { queue, prefix, conn };
  }

  async function clientCount(conn: Redis): Promise<number> {
    const list = (await conn.call('CLIENT', 'LIST')) as string;
    return list.trim().split('\n').length;
  }

  it('adds through the one shared connection and runs every job once in a consumer', async () => {
    const { queue, conn } = await makeQueue();
    const before = await clientCount(conn);
    for (let i = 0; i < 40; i++) await queue.add('embed', [{ jobId: `e-${i}`, data: embedJob(`t${i}`) }]);
    await queue.add('persist', Array.from({ length: 60 }, (_, i) => ({ jobId: `p-${i}`, data: { user_id: 'u', turn_id: `t${i}` } })));
    assert.equal(await clientCount(conn), before, 'no connection opened per enqueue');
    assert.equal((await queue.counts()).embed.waiting, 40);

    const seen = { embed: [] as string[], persist: [] as string[] };
    await queue.consume(
      {
        embed: async (d, meta) => {
          assert.equal(meta.attempt, 1);
          seen.embed.push(d.turn_id);
        },
        persist: async (d) => void seen.persist.push(d.turn_id),
      },
      { queues: ['embed', 'persist', 'compact'], concurrency: 8 },
    );
    await queue.idle();
    assert.equal(seen.embed.length, 40);
    assert.equal(new Set(seen.embed).size, 40);
    assert.equal(seen.persist.length, 60);
    const counts = await queue.counts();
    assert.equal(counts.embed.completed, 40);
    assert.equal(counts.persist.completed, 60);
    assert.equal(counts.compact.waiting, 0, 'a queue with no processor is not consumed, and nothing broke');
  });

  it('does not add a job whose id is already waiting', async () => {
    const { queue } = await makeQueue();
    await queue.add('persist', [{ jobId: 'same', data: { user_id: 'u', turn_id: 'a' } }, { jobId: 'same', data: { user_id: 'u', turn_id: 'a' } }]);
    await queue.add('persist', [{ jobId: 'same', data: { user_id: 'u', turn_id: 'a' } }]);
    assert.equal((await queue.counts()).persist.waiting, 1);
    let runs = 0;
    await queue.consume({ persist: async () => void runs++ }, { queues: ['persist'], concurrency: 2 });
    await queue.idle();
    assert.equal(runs, 1);
  });

  it('refuses an invalid payload on the producer side, naming the field, and adds none of the batch', async () => {
    const { queue } = await makeQueue();
    await assert.rejects(
      queue.add('persist', [{ jobId: 'ok', data: { user_id: 'u', turn_id: 'a' } }, { jobId: 'bad', data: { user_id: 'u', turn_id: 42 } as unknown as { user_id: string; turn_id: string } }]),
      (err: unknown) => err instanceof ValidationError && err.details!.some((d) => d.path === 'turn_id'),
    );
    assert.equal((await queue.counts()).persist.waiting, 0);
  });

  it('fails a malformed job at once as unrecoverable instead of retrying it', async () => {
    const { queue, prefix, conn } = await makeQueue({ attempts: 5 });
    // a producer that skipped validation (another version, a hand-written client)
    const raw = new Queue('persist', { connection: conn, prefix });
    await raw.add('persist', { turn: 'no turn_id here' }, { jobId: 'malformed', attempts: 5 });
    await raw.close();
    let runs = 0;
    await queue.consume({ persist: async () => void runs++ }, { queues: ['persist'], concurrency: 1 });
    await until('the job to fail', async () => (await queue.counts()).persist.failed === 1);
    const [failed] = await queue.failed('persist', 10);
    assert.equal(runs, 0, 'the processor never saw it');
    assert.equal(failed!.jobId, 'malformed');
    assert.equal(failed!.attempts, 1, 'not retried');
    assert.match(failed!.reason, /invalid persist job payload: (user_id|turn_id)/);
  });

  it('retries with backoff, keeps a job failed after its attempts, and runs it again on request', async () => {
    const { queue } = await makeQueue({ attempts: 3, backoffMs: 10 });
    let healthy = false;
    const attempts: number[] = [];
    await queue.consume(
      {
        persist: async (d, meta) => {
          attempts.push(meta.attempt);
          if (!healthy) throw new Error(`cannot store ${d.turn_id} yet`);
        },
      },
      { queues: ['persist'], concurrency: 1 },
    );
    await queue.add('persist', [{ jobId: 'flaky', data: { user_id: 'u', turn_id: 'f1' } }, { jobId: 'other', data: { user_id: 'u', turn_id: 'f2' } }]);
    await until('both jobs to fail', async () => (await queue.counts()).persist.failed === 2);
    const failed = await queue.failed('persist', 10);
    assert.deepEqual(failed.map((f) => f.attempts), [3, 3]);
    assert.match(failed[0]!.reason, /cannot store f\d yet/);
    assert.deepEqual([...new Set(attempts)].sort(), [1, 2, 3]);

    assert.equal(await queue.removeFailed('persist', (d) => (d as { turn_id: string }).turn_id === 'f2'), 1);
    assert.deepEqual((await queue.failed('persist', 10)).map((f) => f.jobId), ['flaky']);

    healthy = true;
    attempts.length = 0;
    assert.equal(await queue.retryFailed('persist'), 1);
    await queue.idle();
    assert.deepEqual(attempts, [1], 'a retried job starts again with its full attempts');
    const counts = await queue.counts();
    assert.equal(counts.persist.failed, 0);
    assert.equal(counts.persist.completed, 1);
  });

  it('close lets an in-flight job finish before it resolves', async () => {
    const { queue, prefix, conn } = await makeQueue();
    let started = false;
    let finished = false;
    await queue.consume(
      {
        persist: async () => {
          started = true;
          await new Promise((r) => setTimeout(r, 300));
          finished = true;
        },
      },
      { queues: ['persist'], concurrency: 1 },
    );
    await queue.add('persist', [{ jobId: 'slow', data: { user_id: 'u', turn_id: 'x' } }]);
    await until('the job to start', () => started);
    await queue.close();
    assert.equal(finished, true);
    const observer = await makeQueue({ connection: conn }, prefix);
    assert.equal((await observer.queue.counts()).persist.completed, 1);
  });

  it('hands an in-flight job back when it outlasts the shutdown timeout, and another consumer runs it', async () => {
    const { queue, prefix, conn } = await makeQueue({ shutdownTimeoutMs: 200 });
    let started = false;
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    await queue.consume(
      {
        persist: async () => {
          started = true;
          await stuck;
        },
      },
      { queues: ['persist'], concurrency: 1 },
    );
    await queue.add('persist', [{ jobId: 'stuck', data: { user_id: 'u', turn_id: 'y' } }]);
    await until('the job to start', () => started);
    await queue.close();
    const other = await makeQueue({ connection: conn }, prefix);
    const counts = await other.queue.counts();
    assert.equal(counts.persist.active, 0);
    assert.equal(counts.persist.waiting, 1, 'handed back to wait');
    const runs: string[] = [];
    await other.queue.consume({ persist: async (d) => void runs.push(d.turn_id) }, { queues: ['persist'], concurrency: 1 });
    await until('the other consumer to run it', () => runs.length === 1);
    release();
  });

  it('removes the jobs holding a user\'s data in every state but active, and counts the active ones', async () => {
    const { queue } = await makeQueue({ attempts: 1 });
    const ofUser = (u: string) => (d: unknown) => (d as { user_id?: string }).user_id === u;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const running = new Set<string>();
    await queue.consume(
      {
        embed: async (d) => {
          if (d.content === 'fail') throw new Error('boom');
          running.add(d.turn_id);
          await gate;
        },
      },
      { queues: ['embed'], concurrency: 2 },
    );
    const job = (id: string, user: string, content: string) => ({ jobId: id, data: { ...embedJob(id, content), user_id: user } });
    await queue.add('embed', [job('a-fail', 'alice', 'fail'), job('a-run', 'alice', 'x'), job('b-run', 'bob', 'x')]);
    await until('one failed and both slots busy', async () => (await queue.counts()).embed.failed === 1 && running.size === 2);
    await queue.add('embed', [job('a-wait', 'alice', 'x'), job('b-wait', 'bob', 'x')]);

    assert.deepEqual(await queue.removeJobs('embed', ofUser('alice')), { removed: 2, active: 1 }, 'failed and waiting removed; the running one counted');
    release();
    await queue.idle();
    assert.deepEqual(await queue.removeJobs('embed', ofUser('alice')), { removed: 0, active: 0 }, 'the finished one is not kept (FORGOTTEN_ON_COMPLETE)');
    assert.equal((await queue.counts()).embed.completed, 3, "bob's two jobs were left alone to complete, as alice's running one");
    assert.deepEqual(await queue.removeJobs('embed', ofUser('bob')), { removed: 0, active: 0 }, 'completed, they are not kept');
  });

  it('schedules a queue by cron once, however many times it is asked', async () => {
    const { queue, prefix, conn } = await makeQueue();
    await queue.schedule('archive', '0 3 * * *', 'Europe/Berlin', { dry_run: false, trigger: 'schedule' });
    const other = await makeQueue({ connection: conn }, prefix);
    await other.queue.schedule('archive', '0 3 * * *', 'Europe/Berlin', { dry_run: false, trigger: 'schedule' });
    const raw = new Queue('archive', { connection: conn, prefix });
    const schedulers = await raw.getJobSchedulers();
    await raw.close();
    assert.equal(schedulers.length, 1);
    assert.equal(schedulers[0]!.pattern, '0 3 * * *');
    assert.equal(schedulers[0]!.tz, 'Europe/Berlin');
    assert.equal((await queue.counts()).archive.delayed, 1, 'the next occurrence waits as one delayed job');
  });

  it('starts beside an occurrence that is already running: a scheduler upserted again with its next occurrence taken is left as it is', async () => {
    const { queue, prefix, conn } = await makeQueue();
    await queue.schedule('archive', '0 3 * * *', 'Europe/Berlin', { dry_run: false, trigger: 'schedule' });
    // the next occurrence leaves the delayed set as a worker's moving it on does (here: as if it had run
    // already), so that an upsert now computes the same occurrence and finds its job id taken: BullMQ
    // answers that with SchedulerJobIdCollision, and a worker started then exited with it
    const raw = new Queue('archive', { connection: conn, prefix });
    const [next] = await raw.getDelayed();
    assert.ok(next?.id);
    await conn.zrem(`${prefix}:archive:delayed`, next.id);
    await conn.zadd(`${prefix}:archive:completed`, Date.now(), next.id);
    const other = await makeQueue({ connection: conn }, prefix);
    await other.queue.schedule('archive', '0 3 * * *', 'Europe/Berlin', { dry_run: false, trigger: 'schedule' });
    const schedulers = await raw.getJobSchedulers();
    await raw.close();
    assert.equal(schedulers.length, 1);
    assert.equal(schedulers[0]!.pattern, '0 3 * * *');
    // another pattern whose next occurrence is that slot cannot replace it now: that is said, not swallowed
    await assert.rejects(other.queue.schedule('archive', '0 3 */1 * *', 'Europe/Berlin', { dry_run: false, trigger: 'schedule' }), /archive job scheduler holds 0 3 \* \* \* .*0 3 \*\/1 \* \*.*start the worker again/s);
  });

  it('fails an add at once while Redis is away, and works again when it is back', async () => {
    const { queue, conn } = await makeQueue();
    await redis.stop();
    await until('the connection to notice', () => conn.status !== 'ready');
    await assert.rejects(queue.add('persist', [{ jobId: 'during-outage', data: { user_id: 'u', turn_id: 'z' } }]));
    await redis.start();
    await until('the connection to come back', () => conn.status === 'ready', 20_000);
    await queue.add('persist', [{ jobId: 'after-outage', data: { user_id: 'u', turn_id: 'z' } }]);
    assert.equal((await queue.counts()).persist.waiting, 1);
  });
});

describe('BullMqQueue.close while Redis is away', () => {
  it('settles, and the process exits: workers ioredis left reconnecting are disconnected, not awaited', { timeout: 60_000 }, async () => {
    const redis = await startRedis();
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../../fixtures/close-queue-without-redis.ts', import.meta.url)), redis.url], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      await until('the workers to consume', () => out.includes('consuming'), 20_000);
      await redis.stop();
      // BullMQ's own Worker.close waits for an `end` event a reconnecting ioredis client never emits
      child.stdin.write('close\n');
      const outcome = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000).unref())]);
      assert.equal(outcome, 0, out);
      assert.match(out, /closed/);
    } finally {
      child.kill('SIGKILL');
      await redis.stop();
    }
  });
});
