import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, startCli } from '../../helpers/cli.js';
import { freePort } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, makeTurns, queueEnv, writeJsonl } from './helpers.js';

interface Doctor {
  backends: Record<string, { backend: string; state: string; detail?: string }>;
  turn_log: { total: number; pending_embed: number; pending_persist: number };
}

/**
 * docs/architecture.md, deployment and backends fallback: with no Redis at all, or a configured Redis that does not answer, the same
 * ingest and retrieve run in-process (one warning in the second case, and doctor/health say why);
 * a worker process, which only makes sense beside a shared queue, refuses to start (exit 2).
 */
describe('no Redis: everything in-process', () => {
  const dir = tmpDir();
  const children = new Set<ChildProcess>();
  after(() => killAll(children));

  const turns = makeTurns(300, 'solo');
  const file = join(dir, 'turns.jsonl');
  writeJsonl(file, turns);
  const target = turns[123]!;

  async function ingestAndRetrieve(env: Record<string, string>): Promise<{ ingestStderr: string }> {
    const ingest = await runCli(['ingest', file, '--wait', '--json'], env);
    assert.equal(ingest.code, 0, ingest.stderr);
    assert.deepEqual(JSON.parse(ingest.stdout), { file, turns: 300, accepted: 300, duplicates: 0, waited: true });
    const retrieve = await runCli(['retrieve', 'courier parcel 974037 dock', '--user', target.user_id, '--top-k', '3', '--json'], env);
    assert.equal(retrieve.code, 0, retrieve.stderr);
    const { results } = JSON.parse(retrieve.stdout) as { results: Array<{ id: string; tier: string }> };
    assert.equal(results[0]?.id, target.id, `the turn about parcel ${123 * 7919} comes first`);
    return { ingestStderr: ingest.stderr };
  }

  it('redis_url unset: ingest and retrieve work, doctor shows the in-process queue and store', { timeout: 60_000 }, async () => {
    const env = queueEnv({ sqlitePath: join(dir, 'unset.db') });
    await ingestAndRetrieve(env);
    const doctor = await runCli(['doctor', '--json'], env);
    assert.equal(doctor.code, 0, doctor.stderr);
    const report = JSON.parse(doctor.stdout) as Doctor;
    assert.deepEqual(report.backends.queue && { b: report.backends.queue.backend, s: report.backends.queue.state }, { b: 'in-process', s: 'ok' });
    assert.equal(report.backends.short_term!.backend, 'memory');
    assert.deepEqual(report.turn_log, { total: 300, pending_embed: 0, pending_persist: 0 });
  });

  it('a worker refuses to start without Redis (exit 2, with the reason)', async () => {
    const env = queueEnv({ sqlitePath: join(dir, 'worker.db') });
    const r = await runCli(['worker'], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /needs Redis, but redis_url is not set/);
    const unreachable = await runCli(['worker', '--queues', 'embed'], { ...env, NEURALCLEAVE_REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    assert.equal(unreachable.code, 2);
    assert.match(unreachable.stderr, /needs Redis, but Redis at redis:\/\/127\.0\.0\.1:\d+\/? is not reachable/);
  });

  it('redis_url set but unreachable: one warning, the same results, and doctor and /health say fallback', { timeout: 60_000 }, async () => {
    const env = queueEnv({ redisUrl: `redis://127.0.0.1:${await freePort()}`, sqlitePath: join(dir, 'fallback.db') });
    const { ingestStderr } = await ingestAndRetrieve(env);
    const warnings = ingestStderr.split('\n').filter((l) => /Redis is not reachable/.test(l));
    assert.equal(warnings.length, 1, ingestStderr);

    const doctor = await runCli(['doctor', '--json'], env);
    const report = JSON.parse(doctor.stdout) as Doctor;
    for (const part of ['queue', 'short_term']) {
      assert.equal(report.backends[part]!.state, 'fallback', part);
      assert.match(report.backends[part]!.detail ?? '', /not reachable at start: connect ECONNREFUSED/);
    }

    const serve = await startCli(['serve'], { ...env, NEURALCLEAVE_PORT: '0' }, /listening on (http:\/\/\S+)/);
    children.add(serve.child);
    const health = (await (await fetch(`${serve.match[1]}/health`)).json()) as Doctor;
    assert.equal(health.backends.queue!.backend, 'in-process');
    assert.equal(health.backends.queue!.state, 'fallback');
    assert.equal(health.backends.short_term!.state, 'fallback');
  });
});
