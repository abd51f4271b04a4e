import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Queue } from 'bullmq';
import type Database from 'better-sqlite3';
import { ownedText, ownerPrefix } from '../../../src/adapters/sqlite/owned-text.js';
import { runCli, startCli, stop } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { killAll, queueEnv, readDb, until } from '../queue/helpers.js';
import { checkpoint, fileBytes, redisDump } from './helpers.js';

const DAY = 86_400_000;
const BULL_PREFIX = 'nc:bull'; // redis_prefix "nc" (the default) + ":bull"

/** A user's conversation: an old session (archived), a live one (compacted), a pinned fact, each carrying `marker`. */
function turnsOf(user: string, marker: string) {
  const old = new Date(Date.now() - 40 * DAY);
  const at = (base: Date, i: number) => new Date(base.getTime() + i * 60_000).toISOString();
  const live = new Date(Date.now() - 3_600_000);
  const turns: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 4; i++) {
    turns.push({ user_id: user, session_id: `${user}-old`, role: i % 2 ? 'assistant' : 'user', content: `Old trip note ${i}: the ${marker} ferry leaves Porto at 0${i}:15 on Monday.`, created_at: at(old, i), importance: 0.8 });
  }
  for (let i = 0; i < 8; i++) {
    turns.push({
      user_id: user,
      session_id: `${user}-live`,
      role: i % 2 ? 'assistant' : 'user',
      name: i % 2 ? `Guide ${marker}` : undefined,
      content: `Live chat ${i}: I booked ${marker} seats for the ${i + 10}th of June in Lisbon.`,
      created_at: at(live, i),
      importance: 0.7,
      metadata: { note: `meta ${marker}` },
    });
  }
  turns.push({ user_id: user, session_id: `${user}-live`, role: 'user', content: `Pinned: my locker code is ${marker} 4417.`, pinned: true, created_at: at(live, 20) });
  return turns.map((t) => JSON.parse(JSON.stringify(t)) as Record<string, unknown>);
}

/** V's rows in every SQLite table that holds memories: must be identical before and after U is forgotten. */
function rowsOf(dbPath: string, user: string) {
  return readDb(dbPath, (db) => ({
    turns: db.prepare('SELECT id, session_id, content, embedded_with, persisted_at FROM turns WHERE user_id = ? ORDER BY id').all(user),
    entries: db.prepare('SELECT * FROM entries WHERE user_id = ? ORDER BY id').all(user),
    vectors: db.prepare('SELECT id, embedder, content FROM vectors WHERE user_id = ? ORDER BY id, embedder').all(user),
  }));
}

/**
 * docs/architecture.md, maintenance `memory forget`: after it, nothing anywhere holds the user's text — not a tier, a table, a
 * Redis key or value, a vector, a summary, an archive or a job in any state — while another user's
 * data is untouched. The marker is a random token planted in the user's content, names and metadata.
 */
describe('memory forget --user U: complete erasure', () => {
  const dir = tmpDir();
  const dbPath = join(dir, 'nc.db');
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let env: Record<string, string>;
  const U = 'ursula';
  const V = 'victor';
  const M = `zq${randomBytes(6).toString('hex')}`; // U's marker
  const W = `wv${randomBytes(6).toString('hex')}`; // V's marker

  before(async () => {
    redis = await startRedis();
    env = queueEnv({ redisUrl: redis.url, sqlitePath: dbPath });
  });
  after(async () => {
    killAll(children);
    await redis.stop(true);
  });

  it('leaves no trace of U in SQLite, Redis, vectors or jobs, and V untouched', { timeout: 180_000 }, async () => {
    const worker = await startCli(['worker'], env, /worker ready/);
    children.add(worker.child);
    const file = join(dir, 'turns.jsonl');
    writeFileSync(file, [...turnsOf(U, M), ...turnsOf(V, W)].map((t) => JSON.stringify(t)).join('\n'));
    const ok = async (args: string[]) => {
      const r = await runCli(args, env);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await ok(['ingest', file, '--wait']);
    const connection = { host: '127.0.0.1', port: redis.port };
    const embed = new Queue('embed', { connection, prefix: BULL_PREFIX });
    const persist = new Queue('persist', { connection, prefix: BULL_PREFIX });
    const compact = new Queue('compact', { connection, prefix: BULL_PREFIX });
    after(() => Promise.all([embed.close(), persist.close(), compact.close()]));
    // summaries: U's by a compact job on the worker (its return value, the summary, lands in BullMQ's
    // completed job and event stream), V's by hand
    await compact.add('compact', { user_id: U, session_id: `${U}-live`, reason: 'manual' }, { jobId: 'u-compact' });
    await until("U's compact job to complete", async () => (await compact.getJobState('u-compact')) === 'completed', 30_000);
    await ok(['memory', 'compact', '--session', `${V}-live`, '--user', V]);
    const archived = JSON.parse((await ok(['memory', 'archive', '--json'])).stdout) as { archived: number };
    assert.equal(archived.archived, 2);
    await until('the archives and summaries to be embedded', () => readDb(dbPath, (db) => (db.prepare("SELECT count(*) AS n FROM vectors WHERE kind IN ('archive', 'summary')").get() as { n: number }).n) === 4, 30_000);
    const counts = readDb(dbPath, (db) => db.prepare('SELECT kind, count(*) AS n FROM entries WHERE user_id = ? GROUP BY kind ORDER BY kind').all(U));
    assert.deepEqual(counts.map((c) => (c as { kind: string }).kind), ['archive', 'summary', 'turn'], 'U has turns, a summary and an archive');

    // jobs holding U's text in every state a job can rest in: failed, waiting, delayed (and completed ones from above)
    {
      await embed.add('embed', { turn_id: 'bad-1', user_id: U, content: `a malformed job with ${M}` }, { jobId: 'bad-1' }); // fails at once: invalid payload
      await until('the malformed job to fail', async () => (await embed.getFailedCount()) >= 1, 20_000);
      await stop(worker.child);
      const job = (user: string, marker: string, id: string) => ({
        turn_id: id, user_id: user, session_id: `${user}-live`, role: 'user', name: null, kind: 'turn', content: `queued ${marker}`, content_hash: 'x', created_at: new Date().toISOString(),
      });
      await embed.add('embed', job(U, M, 'u-wait'), { jobId: 'u-wait' });
      await embed.add('embed', job(U, M, 'u-later'), { jobId: 'u-later', delay: 3_600_000 });
      await embed.add('embed', job(V, W, 'v-wait'), { jobId: 'v-wait' });
      const uTurn = readDb(dbPath, (db) => (db.prepare('SELECT id FROM turns WHERE user_id = ? LIMIT 1').get(U) as { id: string }).id);
      await persist.add('persist', { turn_id: uTurn }, { jobId: 'u-persist' });
    }

    // the marker is where we will look for it (the search works)
    checkpoint(dbPath, false);
    assert.ok(fileBytes(dbPath).includes(M), 'U marker in the SQLite file before');
    const redisBefore = (await redisDump(redis.url)).join('\n');
    assert.ok(redisBefore.includes(M), 'U marker in Redis before');
    assert.ok((await redisDump(redis.url)).some((v) => v.includes('returnvalue') === false && v.includes(M) && v.includes('summary')), "U's summary in a compact job's return value before");
    assert.ok(readDb(dbPath, (db) => (db.prepare('SELECT count(*) AS n FROM vectors WHERE user_id = ?').get(U) as { n: number }).n) > 0);
    const vBefore = rowsOf(dbPath, V);
    // U's marker as the full-text index holds U's words (src/adapters/sqlite/owned-text.ts)
    const indexed = (db: Database.Database) => db.prepare('SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?').pluck().get(`"${ownedText(ownerPrefix(U), M)}"`) as number;
    assert.ok(readDb(dbPath, indexed) > 0, 'U marker in the full-text index before');

    // a terminal-less run without --yes refuses and changes nothing
    const refused = await runCli(['memory', 'forget', '--user', U], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--yes/);

    const r = await runCli(['memory', 'forget', '--user', U, '--yes', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { long_term: Record<string, number>; turn_log: number; short_term: number; vectors: number; jobs: number; errors: string[] };
    assert.deepEqual(report.errors, []);
    assert.ok(report.long_term.turn! > 0 && report.long_term.summary! >= 1 && report.long_term.archive! >= 1, JSON.stringify(report));
    assert.ok(report.turn_log > 0 && report.short_term >= 1 && report.vectors > 0);
    assert.ok(report.jobs >= 4, `jobs removed: ${report.jobs}`);

    // SQLite: the file bytes, after forget's own checkpoint (no VACUUM), hold no trace …
    assert.ok(!fileBytes(dbPath).includes(M), 'no U marker in the SQLite file (secure delete, checkpointed)');
    // … and after a rebuild either
    checkpoint(dbPath, true);
    const bytes = fileBytes(dbPath);
    assert.ok(!bytes.includes(M), 'no U marker in the SQLite file after VACUUM');
    assert.ok(bytes.includes(W), 'V is still in the file (the search works)');
    readDb(dbPath, (db) => {
      const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'entries_fts%'").all() as Array<{ name: string }>).map((t) => t.name);
      // `erasures` is the signal to the other processes sharing the file: the user id (no text) for minutes
      for (const t of tables.filter((name) => name !== 'erasures')) {
        const cols = (db.prepare('SELECT name FROM pragma_table_info(?)').all(t) as Array<{ name: string }>).map((c) => c.name);
        if (cols.includes('user_id')) assert.equal((db.prepare(`SELECT count(*) AS n FROM "${t}" WHERE user_id = ?`).get(U) as { n: number }).n, 0, `no row of U in ${t}`);
      }
      assert.equal(indexed(db), 0, 'full-text index forgot U');
    });

    // Redis: no key and no value (short-term lists, jobs in any state, event streams) holds U's text
    const dump = await redisDump(redis.url);
    const hits = dump.filter((v) => v.includes(M));
    assert.deepEqual(hits, [], 'no U marker in Redis');
    assert.ok(dump.some((v) => v.includes(W)), 'V is still in Redis (the search works)');

    // vectors: none of U; retrieval finds nothing of U; V's rows are exactly as they were
    const afterRetrieve = await runCli(['retrieve', M, '--user', U, '--json'], env);
    assert.equal(afterRetrieve.code, 0, afterRetrieve.stderr);
    assert.deepEqual((JSON.parse(afterRetrieve.stdout) as { results: unknown[] }).results, []);
    assert.deepEqual(rowsOf(dbPath, V), vBefore, "V's turns, entries and vectors are untouched");
    const vRetrieve = JSON.parse((await runCli(['retrieve', `${W} ferry`, '--user', V, '--json'], env)).stdout) as { results: Array<{ content: string }> };
    assert.ok(vRetrieve.results.some((x) => x.content.includes(W)), 'V still retrieves');
  });
});
