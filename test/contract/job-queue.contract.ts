import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ValidationError } from '../../src/errors.js';
import { DoNotRetryError, type JobQueue, type JobSpec } from '../../queues/queue.js';
import { until } from '../helpers/until.js';

export interface JobQueueOptions {
  /** tries per job */
  attempts: number;
  /** first retry delay, doubled each retry */
  backoffMs: number;
}

/**
 * The contract every JobQueue passes (see the port's doc comment, src/ports/job-queue.ts). `make`
 * returns a fresh queue that sees no other queue's jobs; the suite closes what it makes.
 */
export function runJobQueueContract(name: string, make: (o: JobQueueOptions) => Promise<JobQueue>): void {
  describe(`JobQueue contract: ${name}`, () => {
    const made: JobQueue[] = [];
    after(async () => {
      await Promise.allSettled(made.map((q) => q.close()));
    });
    const queue = async (o: Partial<JobQueueOptions> = {}) => {
      const q = await make({ attempts: 3, backoffMs: 20, ...o });
      made.push(q);
      return q;
    };
    const persist = (id: string, user = 'u'): JobSpec<'persist'> => ({ jobId: id, data: { user_id: user, turn_id: id } });
    const gate = () => {
      let open!: () => void;
      const closed = new Promise<void>((r) => (open = r));
      return { closed, open };
    };

    it('runs jobs added before and after consume, once each, with the parsed payload and its id', async () => {
      const q = await queue();
      await q.add('persist', [persist('p1'), persist('p2')]);
      // defaults of the payload schema are applied before the processor sees the job
      await q.add('compact', [{ jobId: 'c1', data: { user_id: 'u', session_id: 's' } as JobSpec<'compact'>['data'] }]);
      assert.equal((await q.counts()).persist.waiting, 2, 'added jobs wait for a consumer');
      const seen: Array<{ turn: string; jobId: string; attempt: number }> = [];
      const compacts: unknown[] = [];
      await q.consume(
        {
          persist: async (d, meta) => void seen.push({ turn: d.turn_id, ...meta }),
          compact: async (d) => void compacts.push(d),
        },
        { queues: ['persist', 'compact'], concurrency: 2 },
      );
      await q.add('persist', [persist('p3')]);
      await until('three persist jobs', () => seen.length === 3, 10_000, 10);
      await q.idle();
      assert.deepEqual(
        seen.sort((a, b) => a.turn.localeCompare(b.turn)),
        ['p1', 'p2', 'p3'].map((id) => ({ turn: id, jobId: id, attempt: 1 })),
      );
      assert.deepEqual(compacts, [{ user_id: 'u', session_id: 's', reason: 'threshold' }]);
      const counts = await q.counts();
      assert.deepEqual(counts.persist, { waiting: 0, active: 0, delayed: 0, failed: 0, completed: 3 });
      assert.equal(counts.compact.completed, 1);
    });

    it('adds a job id once while it is waiting or running', async () => {
      const q = await queue();
      await q.add('persist', [persist('same'), persist('same')]);
      await q.add('persist', [persist('same')]);
      assert.equal((await q.counts()).persist.waiting, 1, 'one job for the id, within a batch and across adds');
      const g = gate();
      let runs = 0;
      await q.consume(
        {
          persist: async () => {
            runs++;
            await g.closed;
          },
        },
        { queues: ['persist'], concurrency: 2 },
      );
      await until('the job to start', () => runs === 1, 10_000, 10);
      await q.add('persist', [persist('same')]);
      g.open();
      await q.idle();
      assert.equal(runs, 1, 'an add while it runs adds nothing');
      assert.equal((await q.counts()).persist.completed, 1);
    });

    it('refuses a bad payload with a ValidationError naming the field, and adds none of the batch', async () => {
      const q = await queue();
      const bad = { jobId: 'bad', data: { user_id: 'u', turn_id: 42 } } as unknown as JobSpec<'persist'>;
      await assert.rejects(q.add('persist', [persist('good'), bad]), (err: unknown) => {
        assert.ok(err instanceof ValidationError, `a ValidationError, not ${(err as Error).name}`);
        assert.equal(err.code, 'bad_request');
        assert.ok(err.details!.some((d) => d.path === 'turn_id'), JSON.stringify(err.details));
        assert.match(err.message, /persist job bad/);
        return true;
      });
      await assert.rejects(q.requeue('persist', [bad]), ValidationError);
      assert.equal((await q.counts()).persist.waiting, 0, 'nothing of the batch was added');
      await assert.rejects(
        q.schedule('archive', '0 3 * * *', 'UTC', { dry_run: 'yes' } as unknown as JobSpec<'archive'>['data']),
        (err: unknown) => err instanceof ValidationError && err.details!.some((d) => d.path === 'dry_run'),
      );
    });

    it('retries a failed attempt with a growing backoff, then keeps the job failed with its reason', async () => {
      const q = await queue({ attempts: 3, backoffMs: 40 });
      const at: number[] = [];
      const attempts: number[] = [];
      await q.consume(
        {
          persist: async (d, meta) => {
            at.push(Date.now());
            attempts.push(meta.attempt);
            throw new Error(`cannot store ${d.turn_id}`);
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('flaky')]);
      await until('the job to fail for good', async () => (await q.counts()).persist.failed === 1, 10_000, 10);
      assert.deepEqual(attempts, [1, 2, 3]);
      // the delays are lower bounds: a retry never comes earlier than its backoff
      assert.ok(at[1]! - at[0]! >= 40 - 5, `first retry after ${at[1]! - at[0]!} ms`);
      assert.ok(at[2]! - at[1]! >= 80 - 5, `second retry after ${at[2]! - at[1]!} ms (doubled)`);
      const [failed] = await q.failed('persist', 10);
      assert.equal(failed!.queue, 'persist');
      assert.equal(failed!.jobId, 'flaky');
      assert.equal(failed!.attempts, 3);
      assert.equal(failed!.reason, 'cannot store flaky');
      assert.deepEqual(failed!.data, { user_id: 'u', turn_id: 'flaky' });
      assert.ok(failed!.failedAt && !Number.isNaN(Date.parse(failed!.failedAt)));
    });

    it('waits in idle() for a job between its attempts', async () => {
      const q = await queue({ attempts: 2, backoffMs: 150 });
      let runs = 0;
      await q.consume(
        {
          persist: async () => {
            if (++runs === 1) throw new Error('first attempt fails');
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('later')]);
      await until('the first attempt', () => runs === 1, 10_000, 5);
      await q.idle();
      assert.equal(runs, 2, 'idle resolved only after the retry ran');
      assert.equal((await q.counts()).persist.completed, 1);
    });

    it('fails a job at once on a DoNotRetryError, with its message as the reason', async () => {
      const q = await queue({ attempts: 5, backoffMs: 20 });
      let runs = 0;
      await q.consume(
        {
          persist: async (d) => {
            runs++;
            throw new DoNotRetryError(`turn ${d.turn_id} can never be stored`);
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('hopeless')]);
      await until('the job to fail', async () => (await q.counts()).persist.failed === 1, 10_000, 10);
      await q.idle();
      assert.equal(runs, 1, 'not retried');
      const [failed] = await q.failed('persist', 10);
      assert.equal(failed!.attempts, 1);
      assert.equal(failed!.reason, 'turn hopeless can never be stored');
    });

    it('lists failed jobs newest first, re-runs them with fresh attempts, and removes those matching', async () => {
      const q = await queue({ attempts: 2, backoffMs: 10 });
      let healthy = false;
      const attempts: Array<[string, number]> = [];
      await q.consume(
        {
          persist: async (d, meta) => {
            attempts.push([d.turn_id, meta.attempt]);
            if (!healthy) throw new Error('down');
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('first', 'alice')]);
      await until('the first to fail', async () => (await q.counts()).persist.failed === 1, 10_000, 10);
      await q.add('persist', [persist('second', 'bob')]);
      await until('the second to fail', async () => (await q.counts()).persist.failed === 2, 10_000, 10);
      assert.deepEqual((await q.failed('persist', 10)).map((f) => f.jobId), ['second', 'first']);
      assert.deepEqual((await q.failed('persist', 1)).map((f) => f.jobId), ['second']);
      assert.deepEqual(await q.failed('persist', 0), []);

      assert.equal(await q.removeFailed('persist', (d) => (d as { user_id: string }).user_id === 'bob'), 1);
      assert.deepEqual((await q.failed('persist', 10)).map((f) => f.jobId), ['first']);
      healthy = true;
      attempts.length = 0;
      assert.equal(await q.retryFailed('persist'), 1);
      await q.idle();
      assert.deepEqual(attempts, [['first', 1]], 'a retried job starts again at attempt 1');
      const counts = await q.counts();
      assert.equal(counts.persist.failed, 0);
      assert.equal(counts.persist.completed, 1);
    });

    it('requeue replaces a job kept as failed and leaves a waiting one as it is', async () => {
      const q = await queue({ attempts: 1 });
      let fail = true;
      const runs: string[] = [];
      await q.consume(
        {
          persist: async (d) => {
            runs.push(d.turn_id);
            if (fail) throw new Error('down');
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('stuck')]);
      await until('the job to fail', async () => (await q.counts()).persist.failed === 1, 10_000, 10);
      fail = false;
      await q.add('persist', [persist('stuck')]);
      await q.idle();
      assert.deepEqual(runs, ['stuck'], 'add leaves a failed job failed');
      await q.requeue('persist', [persist('stuck'), persist('stuck')]);
      await q.idle();
      assert.deepEqual(runs, ['stuck', 'stuck'], 'requeue runs it again, once');
      const counts = await q.counts();
      assert.equal(counts.persist.failed, 0);
      assert.equal(counts.persist.completed, 1);
    });

    it('requeue runs again work whose job completed without finishing it', async () => {
      const q = await queue();
      const runs: string[] = [];
      await q.consume({ persist: async (d) => void runs.push(d.turn_id) }, { queues: ['persist'], concurrency: 1 });
      await q.add('persist', [persist('skipped')]);
      await q.idle();
      // e.g. an embed job that completed as "skipped" on a worker without the model: the turn is still
      // pending in the turn log, so the reconciler's requeue must run it again
      await q.requeue('persist', [persist('skipped')]);
      await q.idle();
      assert.deepEqual(runs, ['skipped', 'skipped']);
    });

    it('runs at most `concurrency` jobs of a queue at once', async () => {
      const q = await queue();
      const g = gate();
      let running = 0;
      let peak = 0;
      let started = 0;
      await q.consume(
        {
          persist: async () => {
            started++;
            peak = Math.max(peak, ++running);
            await g.closed;
            running--;
          },
        },
        { queues: ['persist'], concurrency: 3 },
      );
      await q.add('persist', Array.from({ length: 7 }, (_, i) => persist(`c${i}`)));
      await until('three jobs running', () => started === 3, 10_000, 10);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(started, 3, 'no fourth job starts while three run');
      assert.equal((await q.counts()).persist.active, 3);
      g.open();
      await q.idle();
      assert.equal(started, 7);
      assert.equal(peak, 3);
    });

    it('hands a batched processor many jobs at once, at most `concurrency` and `maxBatch`; a failing job fails alone and is retried alone', async () => {
      const q = await queue({ attempts: 2, backoffMs: 20 });
      const batches: string[][] = [];
      const runs = new Map<string, number[]>();
      await q.consume(
        {
          persist: {
            maxBatch: 4,
            batch: async (jobs) => {
              batches.push(jobs.map((j) => j.jobId));
              return jobs.map((j) => {
                runs.set(j.jobId, [...(runs.get(j.jobId) ?? []), j.attempt]);
                if (j.data.turn_id === 'bad') return { ok: false as const, error: new Error('cannot store bad') };
                if (j.data.turn_id === 'final') return { ok: false as const, error: new DoNotRetryError('never storable') };
                return { ok: true as const, value: j.data.turn_id };
              });
            },
          },
        },
        { queues: ['persist'], concurrency: 3 },
      );
      const ids = ['a', 'b', 'bad', 'c', 'final', 'd', 'e'];
      await q.add('persist', ids.map((id) => persist(id)));
      await until('every job settled', async () => (await q.counts()).persist.failed === 2, 10_000, 10);
      await q.idle();
      assert.ok(batches.every((b) => b.length <= 3), `batches ${JSON.stringify(batches)} hold at most concurrency (3) jobs`);
      assert.ok(batches.some((b) => b.length > 1), `batches ${JSON.stringify(batches)}: jobs started together share a call`);
      for (const id of ['a', 'b', 'c', 'd', 'e']) assert.deepEqual(runs.get(id), [1], `${id} ran once: its batch-mates' failures are not its own`);
      assert.deepEqual(runs.get('bad'), [1, 2], 'the failing job is retried with its own attempts');
      assert.deepEqual(runs.get('final'), [1], 'a DoNotRetryError fails its job at once');
      const failed = await q.failed('persist', 10);
      assert.deepEqual(failed.map((f) => [f.jobId, f.attempts, f.reason]).sort(), [['bad', 2, 'cannot store bad'], ['final', 1, 'never storable']]);
      assert.equal((await q.counts()).persist.completed >= 5, true);
    });

    it('gathers the jobs waiting together into one batch, up to `maxBatch`', async () => {
      const q = await queue();
      const sizes: number[] = [];
      const g = gate();
      await q.add('persist', Array.from({ length: 10 }, (_, i) => persist(`w${i}`)));
      await q.consume(
        {
          persist: {
            maxBatch: 4,
            batch: async (jobs) => {
              sizes.push(jobs.length);
              await g.closed;
              return jobs.map(() => ({ ok: true as const }));
            },
          },
        },
        { queues: ['persist'], concurrency: 8 },
      );
      await until('two batches running', () => sizes.length >= 2, 10_000, 10);
      g.open();
      await q.idle();
      assert.equal(sizes.reduce((a, b) => a + b, 0), 10, 'each job in one batch');
      assert.ok(Math.max(...sizes) > 1 && Math.max(...sizes) <= 4, `batch sizes ${JSON.stringify(sizes)}`);
    });

    it('removes the jobs holding a user\'s data (waiting and failed) and counts the running ones', async () => {
      const q = await queue({ attempts: 1 });
      const ofUser = (user: string) => (d: unknown) => (d as { user_id?: string }).user_id === user;
      const g = gate();
      const running = new Set<string>();
      const ran: string[] = [];
      await q.consume(
        {
          persist: async (d) => {
            ran.push(d.turn_id);
            if (d.turn_id.endsWith('fail')) throw new Error('boom');
            running.add(d.turn_id);
            await g.closed;
          },
        },
        { queues: ['persist'], concurrency: 2 },
      );
      await q.add('persist', [persist('a-fail', 'alice')]);
      await until('the failure', async () => (await q.counts()).persist.failed === 1, 10_000, 10);
      await q.add('persist', [persist('a-run', 'alice'), persist('b-run', 'bob')]);
      await until('both slots busy', () => running.size === 2, 10_000, 10);
      await q.add('persist', [persist('a-wait', 'alice'), persist('b-wait', 'bob')]);
      assert.deepEqual(await q.removeJobs('persist', ofUser('alice')), { removed: 2, active: 1 }, 'failed and waiting removed; the running one counted');
      g.open();
      await q.idle();
      assert.ok(!ran.includes('a-wait'), 'a removed job never runs');
      assert.ok(ran.includes('b-wait'), "bob's waiting job still runs");
      assert.deepEqual(await q.failed('persist', 10), []);
      // its id is free again: the same work can be added anew
      await q.add('persist', [persist('a-wait', 'alice')]);
      await q.idle();
      assert.ok(ran.includes('a-wait'));
    });

    it('close lets an in-flight job finish, and refuses adds afterwards', async () => {
      const q = await queue();
      let started = false;
      let finished = false;
      await q.consume(
        {
          persist: async () => {
            started = true;
            await new Promise((r) => setTimeout(r, 200));
            finished = true;
          },
        },
        { queues: ['persist'], concurrency: 1 },
      );
      await q.add('persist', [persist('slow')]);
      await until('the job to start', () => started, 10_000, 10);
      await q.close();
      assert.equal(finished, true, 'close resolved only after the job finished');
      await assert.rejects(q.add('persist', [persist('late')]), /closed/);
      await assert.rejects(q.consume({ persist: async () => undefined }, { queues: ['persist'], concurrency: 1 }), /closed/);
      await q.close(); // a second close is harmless
    });
  });
}
