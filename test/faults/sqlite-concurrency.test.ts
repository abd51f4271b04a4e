import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import {
  faultRig,
  TurnStream, assertIntact, count, failedJobs, faultEnv, kill, pendingIn, postJson, rawRequest, sleep, until, writeTurnsFile } from './helpers.js';

/** the run ends once this much has been done (counts, not time: the machine is shared) */
const TARGET = { turns: 1500, edits: 10, deletes: 5 };

/**
 * docs/architecture.md, deployment and backends, one host and several processes sharing the SQLite file (WAL, busy timeout): the API
 * (turn log appends, edits, deletes, prunes, reads) and two workers (vectors, entries, turn-log marks)
 * on one file, with a bulk `ingest` beside them so that the workers have a deep queue to drain at full
 * speed. No SQLITE_BUSY may reach a caller — no 5xx, no job failed or retried
 * over it, no process logging it — and the file passes `PRAGMA integrity_check` afterwards.
 */
describe('faults: SQLite shared by the API and two workers at full speed', () => {
  const rig = faultRig('nc-fault-sqlite-');
  const { dir, fleet } = rig;

  it('no SQLITE_BUSY reaches a caller, and the file stays intact', { timeout: 150_000 }, async () => {
    const tag = 'sq';
    const dbPath = join(dir, `${tag}.db`);
    const env = faultEnv({ sqlitePath: dbPath, redisUrl: rig.redis.url, prefix: tag });
    const workers = await Promise.all([0, 1].map(() => fleet.worker(env, ['--queues', 'embed,persist', '--concurrency', '32'])));
    const serve = await fleet.serve(env);

    const statuses = new Map<string, number>();
    const fiveXX: string[] = [];
    const note = (what: string, status: number, text: string) => {
      statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
      if (status >= 500) fiveXX.push(`${what}: ${status} ${text.slice(0, 200)}`);
    };
    const stream = new TurnStream(serve.base, tag, 12);
    let running = true;
    // a bulk import beside the API keeps the workers' queues deep: they write as fast as they can
    const bulk = join(dir, 'bulk.jsonl');
    writeTurnsFile(bulk, 'bulk', 4000);
    const ingest = runCli(['ingest', bulk, '--json'], env);
    // readers and the API's own writers beside the stream: edits, deletes and prunes of stored entries
    const others = [
      ...[0, 1, 2].map(async (k) => {
        for (let i = 0; running; i++) {
          const r = await postJson(serve.base, '/memory/retrieve', { query: `courier parcel dock ${i % 13}`, user_id: `u${(i + k) % 5}`, top_k: 8 });
          note('retrieve', r.status, r.text);
        }
      }),
      (async () => {
        for (let i = 0; running; i++) {
          const r = await rawRequest(serve.base, 'GET', `/memory/recent?user_id=u${i % 5}&limit=50`);
          note('recent', r.status, r.text);
          const entries = (r.json?.entries ?? []) as Array<{ id: string }>;
          const pick = entries[i % Math.max(1, entries.length)];
          if (!pick) {
            await sleep(20);
            continue;
          }
          // ids are per user: a by-id call names the user it acts for
          const path = `/memory/${encodeURIComponent(pick.id)}?user_id=u${i % 5}`;
          const op =
            i % 3 === 0
              ? await rawRequest(serve.base, 'DELETE', path)
              : await rawRequest(serve.base, 'PATCH', path, JSON.stringify({ content: `edited ${i}: ${pick.id} moved to another dock`, importance: 0.8 }));
          // 404: deleted meanwhile by this loop; 409: an edit to a text the user already holds
          note(i % 3 === 0 ? 'delete' : 'edit', op.status, op.text);
        }
      })(),
      (async () => {
        for (let i = 0; running; i++) {
          const r = await postJson(serve.base, '/memory/prune', { user_id: `u${i % 5}`, below_importance: 0.05 });
          note('prune', r.status, r.text);
          await sleep(200);
        }
      })(),
    ];
    const done = () => stream.acknowledged.size >= TARGET.turns && (statuses.get('edit 200') ?? 0) >= TARGET.edits && (statuses.get('delete 200') ?? 0) >= TARGET.deletes;
    await until('the target amount of work', () => done() || stream.errors.length > 0 || fiveXX.length > 0, 120_000, 100).finally(() => (running = false));
    await Promise.all(others);
    await stream.stop();
    const imported = await ingest;
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(stream.errors, [], 'every turn write answered 202');
    assert.deepEqual(fiveXX.slice(0, 5), [], 'no 5xx');
    for (const op of ['prune 200', 'retrieve 200']) assert.ok((statuses.get(op) ?? 0) > 0, `the API wrote and read beside the stream (${op})`);

    await until('the queues to drain', () => pendingIn(dbPath) === 0, 90_000, 200);
    const failed = await failedJobs(rig.redis.url, tag);
    assert.deepEqual(failed.filter((j) => /SQLITE|database is locked/i.test(j.reason)), [], 'no job failed over a busy database');
    assert.deepEqual(failed, [], 'no job failed');
    for (const p of [serve, ...workers]) await kill(p);
    const logs = [serve, ...workers].map((p) => p.output()).join('\n');
    assert.doesNotMatch(logs, /SQLITE_BUSY|database is locked/i, 'no process met a busy database');
    assert.equal(count(dbPath, 'SELECT count(*) AS n FROM vectors WHERE id NOT IN (SELECT id FROM turns) AND id NOT IN (SELECT id FROM entries)'), 0, 'no orphan vector');
    assertIntact(dbPath);
    process.stderr.write(`# sqlite-concurrency: ${stream.acknowledged.size} turns written; statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`);
  });
});
