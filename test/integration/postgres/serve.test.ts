import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { runCli, startCli, stop } from '../../helpers/cli.js';
import { createTestDatabase, TEST_PG_SERVER } from '../../helpers/postgres.js';
import { tcpProxy } from '../../helpers/tcp-proxy.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';
import { killAll } from '../queue/helpers.js';

async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** every file under `dir`, recursively */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => join(d.parentPath ?? d.path, d.name));
}

const env = (url: string, extra: Record<string, string> = {}) => ({
  NEURALCLEAVE_DATABASE_URL: url,
  NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
  NEURALCLEAVE_LOG_LEVEL: 'warn',
  NEURALCLEAVE_PORT: '0',
  ...extra,
});

describe('serve with database_url (real PostgreSQL)', () => {
  const children = new Set<ChildProcess>();
  after(() => killAll(children));

  it('writes and retrieves through PostgreSQL, and creates no SQLite file in its empty working folder', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase();
    const cwd = tmpDir();
    const serve = await startCli(['serve', '--processes', '1'], env(db.url), /listening on (http:\/\/\S+)/, 60_000, { cwd });
    children.add(serve.child);
    const base = serve.match[1]!;
    const turns = Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, user_id: 'ann', role: 'user', content: `note ${i}: my locker number is ${4000 + i} at the east gate` }));
    for (const t of turns) assert.equal((await post(base, '/sessions/s1/turns', t)).status, 202);
    const pg = new Postgres({ url: db.url, max: 1 });
    try {
      await until('every job done', async () => (await pg.query<{ n: number }>('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL'))[0]!.n === 0, 60_000, 200);
      const [counts] = await pg.query("SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM vectors) AS vectors, (SELECT count(*) FROM entries WHERE kind = 'turn') AS entries");
      assert.deepEqual(counts, { turns: 12, vectors: 12, entries: 12 });
    } finally {
      await pg.close();
    }
    // a new session: not from the short-term tier, from PostgreSQL's long-term store and vectors
    const r = await post(base, '/memory/retrieve', { user_id: 'ann', session_id: 'elsewhere', query: 'locker number 4007', top_k: 5 });
    assert.equal(r.status, 200);
    const hit = (r.json.results as Array<{ id: string; tier: string }>).find((x) => x.id === 't7');
    assert.ok(hit, JSON.stringify(r.json.results));
    const doctor = await runCli(['doctor', '--json'], env(db.url), undefined, cwd);
    assert.equal(doctor.code, 0, doctor.stderr);
    const report = JSON.parse(doctor.stdout);
    assert.equal(report.backends.long_term.backend, 'postgres');
    assert.equal(report.database_url, db.url, 'the store named as the database it is');
    assert.equal(report.database.path, db.url);
    assert.equal(report.sqlite_path, undefined, 'no SQLite file to name');
    assert.equal(report.sqlite, undefined);
    const text = await runCli(['doctor'], env(db.url), undefined, cwd);
    assert.match(text.stdout, new RegExp(`^database    ${db.url.replace(/[.]/g, '\\.')} — `, 'm'));
    assert.doesNotMatch(text.stdout, /sqlite/i);
    assert.equal(await stop(serve.child), 0);
    assert.deepEqual(files(cwd).filter((f) => /\.db(-wal|-shm)?$/.test(f)), [], 'no SQLite file');
  });

  it('a database that does not answer at start stops serve (exit 2) naming it without its password; no SQLite file', { timeout: 60_000 }, async () => {
    const cwd = tmpDir();
    const r = await runCli(['serve'], env('postgres://nc:s3cret-pw@127.0.0.1:1/memory', { NEURALCLEAVE_DATABASE_CONNECT_TIMEOUT_MS: '1000' }), undefined, cwd);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /postgres:\/\/nc:\*\*\*@127\.0\.0\.1:1\/memory/);
    assert.doesNotMatch(r.stderr, /s3cret-pw/);
    assert.deepEqual(files(cwd).filter((f) => /\.db$/.test(f)), []);
  });

  it('the database lost while serving: writes answer 503 backend_unavailable, nothing acknowledged is lost, and it drains when the database returns', { timeout: 180_000 }, async () => {
    const db = await createTestDatabase();
    const server = new URL(TEST_PG_SERVER);
    const proxy = await tcpProxy(server.hostname, Number(server.port || 5432));
    const through = new URL(db.url);
    through.port = String(proxy.port);
    // trust auth ignores it; /health must not show it
    through.password = 'pw-not-shown';
    const cwd = tmpDir();
    const serve = await startCli(
      ['serve', '--processes', '1'],
      env(through.toString(), { NEURALCLEAVE_RECONCILE_INTERVAL_S: '1', NEURALCLEAVE_RECONCILE_AFTER_S: '1', NEURALCLEAVE_DATABASE_CONNECT_TIMEOUT_MS: '1000' }),
      /listening on (http:\/\/\S+)/,
      60_000,
      { cwd },
    );
    children.add(serve.child);
    const base = serve.match[1]!;
    const acknowledged: string[] = [];
    const write = async (id: string) => {
      const w = await post(base, '/sessions/s/turns', { id, user_id: 'bo', role: 'user', content: `turn ${id}: the boat leaves from pier ${id.length * 7}` });
      if (w.status === 202) acknowledged.push(id);
      return w;
    };
    for (let i = 0; i < 10; i++) assert.equal((await write(`before-${i}`)).status, 202);

    await proxy.stop();
    const refused = await write('during-0');
    assert.equal(refused.status, 503, JSON.stringify(refused.json));
    assert.equal(refused.json.error.code, 'backend_unavailable');
    assert.doesNotMatch(JSON.stringify(refused.json), /@127\.0\.0\.1:\d+\/\w+.*password/);
    for (let i = 1; i < 5; i++) assert.equal((await write(`during-${i}`)).status, 503);
    const health = await fetch(`${base}/health`, { headers: { connection: 'close' } });
    const down = (await health.json()) as { status: string; problems: Array<{ part: string; advice: string }>; database_url?: string; sqlite_path?: string };
    assert.equal(health.status, 503);
    assert.equal(down.status, 'down');
    assert.match(down.problems.find((p) => p.part === 'long_term')?.advice ?? '', /PostgreSQL database \(database_url\) does not answer/);
    assert.doesNotMatch(JSON.stringify(down), /SQLite|pw-not-shown/);
    assert.equal(down.database_url, through.toString().replace('pw-not-shown', '***'));
    assert.equal(down.sqlite_path, undefined);

    await proxy.start();
    await until('writes accepted again', async () => (await write(`after-${acknowledged.length}`)).status === 202, 30_000, 250);
    for (let i = 0; i < 5; i++) assert.equal((await write(`after-x${i}`)).status, 202);

    const pg = new Postgres({ url: db.url, max: 1 });
    try {
      await until('the queues drained', async () => (await pg.query<{ n: number }>('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL'))[0]!.n === 0, 90_000, 250);
      const stored = (await pg.query<{ id: string }>("SELECT id FROM turns WHERE user_id = 'bo' ORDER BY id")).map((r) => r.id);
      assert.deepEqual(stored, [...acknowledged].sort(), 'every acknowledged turn stored once, none of the refused');
      const [v] = await pg.query<{ n: number }>("SELECT count(*) AS n FROM vectors WHERE user_id = 'bo'");
      assert.equal(v!.n, acknowledged.length, 'and embedded');
    } finally {
      await pg.close();
      assert.equal(await stop(serve.child), 0);
      await proxy.close();
    }
  });
});
