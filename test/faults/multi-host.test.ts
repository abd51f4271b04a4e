import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MIGRATIONS } from '../../src/adapters/postgres/migrations.js';
import { Postgres } from '../../src/adapters/postgres/pool.js';
import { GENEROUS_BUDGETS } from '../helpers/budgets.js';
import { createTestDatabase } from '../helpers/postgres.js';
import {
  TurnStream,
  assertShortTermOnce,
  expectedFrom,
  failedJobs,
  faultEnv,
  faultRig,
  isImportant,
  kill,
  rawRequest,
  retry,
  until,
  type Expected,
} from './helpers.js';

/**
 * docs/architecture.md, deployment shapes — several hosts on PostgreSQL: two `serve` and two `worker`
 * processes, each in a working folder of its own (nothing on disk is shared: a process on another
 * host could not see it), one redis-server and one PostgreSQL database. A client streams turns to
 * both APIs; one API and one worker are SIGKILLed mid-stream and restarted, and the client retries
 * what got no answer. After the queues drain, every turn that got a 202 is stored exactly once — turn
 * log, vector, long-term entry when important, short-term list — nothing else is, and a retrieve on
 * either API finds turns the other accepted. No process created an SQLite file.
 */

/** Every expected turn once in the PostgreSQL store, with its jobs done, and nothing else there. */
async function assertStoredOncePg(pg: Postgres, expected: ReadonlyMap<string, Expected>): Promise<void> {
  const rows = [...expected.values()];
  await pg.tx(async (tx) => {
    await tx.run('CREATE TEMP TABLE expected (user_id text, id text, important boolean, PRIMARY KEY (user_id, id)) ON COMMIT DROP');
    await tx.run('INSERT INTO expected SELECT * FROM unnest($1::text[], $2::text[], $3::bool[])', [rows.map((r) => r.user_id), rows.map((r) => r.id), rows.map(isImportant)]);
    const some = async (sql: string) => (await tx.query<{ id: string }>(`${sql} LIMIT 5`)).map((r) => r.id);
    const one = async (sql: string) => (await tx.query<{ n: number }>(sql))[0]!.n;
    const absent = (table: string, extra = '') => `SELECT x.id FROM ${table} x WHERE ${extra} NOT EXISTS (SELECT 1 FROM expected e WHERE e.user_id = x.user_id AND e.id = x.id)`;
    const missing = (table: string, which: string, extra = '') => `SELECT e.id FROM expected e WHERE ${which} AND NOT EXISTS (SELECT 1 FROM ${table} x WHERE x.user_id = e.user_id AND x.id = e.id ${extra})`;
    assert.deepEqual(await some(missing('turns', 'true')), [], 'no acknowledged turn missing from the turn log');
    assert.deepEqual(await some(absent('turns')), [], 'no turn in the log that was not acknowledged (or retried)');
    assert.equal(await one('SELECT count(*)::int AS n FROM turns'), expected.size, 'the turn log holds exactly these turns');
    assert.deepEqual(await some('SELECT id FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL'), [], 'no turn left unprocessed');
    assert.equal(await one('SELECT count(*)::int AS n FROM vectors'), expected.size, 'one vector per turn');
    assert.equal(await one('SELECT count(*)::int AS n FROM (SELECT DISTINCT user_id, id FROM vectors) v'), expected.size, 'no turn embedded twice');
    assert.deepEqual(await some(absent('vectors')), [], 'no vector without its turn');
    assert.deepEqual(await some(absent('entries', "x.kind = 'turn' AND")), [], 'no long-term entry without its turn');
    assert.deepEqual(await some(missing('entries', 'e.important', "AND x.kind = 'turn'")), [], 'every important turn stored long-term');
    assert.deepEqual(await some(`SELECT e.id FROM expected e JOIN entries x ON x.user_id = e.user_id AND x.id = e.id WHERE NOT e.important`), [], 'no unimportant turn stored long-term');
    assert.equal(await one("SELECT count(*)::int AS n FROM entries WHERE kind = 'turn'"), rows.filter(isImportant).length, 'one entry per important turn');
  });
}

/** The SQLite files under a folder (there must be none: the durable store is PostgreSQL). */
function sqliteFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && /\.(db|sqlite3?)(-wal|-shm)?$/.test(e.name)) out.push(join(e.parentPath, e.name));
  }
  return out;
}

/** A retrieve on `base` as the turn's user, from a session of its own: null when the turn's id is among the results, else what came back. */
async function misses(base: string, t: Expected & { content: string }): Promise<string | null> {
  const reply = await rawRequest(base, 'POST', '/memory/retrieve', JSON.stringify({ query: t.content, user_id: t.user_id, session_id: `probe-${t.id}`, top_k: 8 }));
  assert.equal(reply.status, 200, reply.text);
  const ids = (reply.json.results as Array<{ id: string }>).map((r) => r.id);
  return ids.includes(t.id) ? null : `results ${ids.join(' ')}; tiers ${JSON.stringify(reply.json.tiers)}`;
}

describe('faults: several hosts on one PostgreSQL database — SIGKILL an API and a worker mid-stream', () => {
  const rig = faultRig('nc-fault-multihost-');
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of closers) await c();
  });

  it('stores every acknowledged turn exactly once, and either API finds what the other accepted', { timeout: 240_000 }, async () => {
    const db = await createTestDatabase();
    const pg = new Postgres({ url: db.url, max: 2 });
    closers.push(() => pg.close());
    const tag = 'mh';
    const env = faultEnv({ databaseUrl: db.url, redisUrl: rig.redis.url, prefix: tag, extra: GENEROUS_BUDGETS });
    // one working folder per process, as if each ran on a host of its own
    const folder = (name: string) => {
      const d = join(rig.dir, name);
      mkdirSync(d, { recursive: true });
      return d;
    };
    const dirs = { apiA: folder('api-a'), apiB: folder('api-b'), workerA: folder('worker-a'), workerB: folder('worker-b') };

    // all four at once: the migrations must run once whichever process gets there first
    const [apiA, apiB, workerA, workerB] = await Promise.all([
      rig.fleet.serve(env, dirs.apiA),
      rig.fleet.serve(env, dirs.apiB),
      rig.fleet.worker(env, undefined, dirs.workerA),
      rig.fleet.worker(env, undefined, dirs.workerB),
    ]);
    const applied = await pg.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(applied.map((r) => r.version), MIGRATIONS.map((m) => m.version), 'the schema is complete');

    const streamA = new TurnStream(apiA.base, `${tag}a`, 6);
    const streamB = new TurnStream(apiB.base, `${tag}b`, 6);
    await until('both APIs acknowledging', () => (streamA.acknowledged.size >= 300 && streamB.acknowledged.size >= 300) || streamA.errors.length + streamB.errors.length > 0, 120_000, 5);
    assert.deepEqual([...streamA.errors, ...streamB.errors], [], 'every request answered before the kill was a 202');

    // API A and worker A crash at once, with requests in flight and jobs running
    await Promise.all([kill(apiA), kill(workerA)]);
    await streamA.done();
    assert.ok(streamA.unanswered.length > 0, 'requests were in flight at the kill');
    const ackedBeforeKill = streamB.acknowledged.size;

    // B keeps accepting meanwhile; A and its worker come back in their own folders
    const [apiA2] = await Promise.all([rig.fleet.serve(env, dirs.apiA), rig.fleet.worker(env, undefined, dirs.workerA)]);
    const retried = await retry(apiA2.base, streamA.unanswered);
    const streamA2 = new TurnStream(apiA2.base, `${tag}c`, 6);
    await until('the restarted API acknowledging, B still streaming', () => (streamA2.acknowledged.size >= 150 && streamB.acknowledged.size >= ackedBeforeKill + 150) || streamA2.errors.length + streamB.errors.length > 0, 120_000, 5);
    await Promise.all([streamA2.stop(), streamB.stop()]);
    assert.deepEqual([...streamA2.errors, ...streamB.errors], [], 'every request to a live API was a 202');
    const requests = [...streamB.unanswered, ...streamA2.unanswered];
    assert.deepEqual(requests, [], 'a live API answered every request');

    const expected = new Map([
      ...expectedFrom(streamA, [...streamA.acknowledged, ...retried]),
      ...expectedFrom(streamA2, streamA2.acknowledged),
      ...expectedFrom(streamB, streamB.acknowledged),
    ]);
    const counts = async () => (await pg.query<{ total: number; open: number }>(
      'SELECT count(*)::int AS total, (count(*) FILTER (WHERE embedded_with IS NULL OR persisted_at IS NULL))::int AS open FROM turns',
    ))[0]!;
    await until('the queues drained', async () => {
      const c = await counts();
      return c.open === 0 && c.total === expected.size;
    }, 120_000, 200);

    await assertStoredOncePg(pg, expected);
    await assertShortTermOnce(expected, { url: rig.redis.url, prefix: tag });
    assert.deepEqual(await failedJobs(rig.redis.url, tag), [], 'no job failed');

    // each API finds turns the other accepted: important ones (in every tier), by their own words
    const sample = (s: TurnStream, n: number) =>
      [...s.acknowledged].map((id) => s.sent.get(id)!).filter(isImportant).slice(0, n).map((t) => ({ ...expected.get(t.id)!, content: t.content }));
    const lost: string[] = [];
    for (const t of sample(streamB, 5)) {
      const miss = await misses(apiA2.base, t);
      if (miss) lost.push(`API A did not find ${t.id} (accepted by B): ${miss}`);
    }
    for (const t of [...sample(streamA, 5), ...sample(streamA2, 5)]) {
      const miss = await misses(apiB.base, t);
      if (miss) lost.push(`API B did not find ${t.id} (accepted by A): ${miss}`);
    }
    assert.deepEqual(lost, []);

    for (const p of [apiA2, apiB, workerB]) await kill(p);
    rig.fleet.killAll();
    for (const d of Object.values(dirs)) assert.deepEqual(sqliteFiles(d), [], `no SQLite file in ${d}`);
    assert.ok(!existsSync(join(dirs.apiA, 'data', 'neuralcleave.db')));
  });
});
