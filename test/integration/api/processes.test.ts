import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { childrenOf } from '../../helpers/children.js';
import { startCli, stop } from '../../helpers/cli.js';
import { readDb } from '../../helpers/read-db.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';

interface Retrieved {
  results: Array<{ id: string; tier: string }>;
  tiers: Record<string, { status: string }>;
}

/** A request on a connection of its own, so the cluster may hand it to either HTTP process. */
async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `serve --processes 2` without Redis: two HTTP processes share the port and the SQLite file, the
 * primary runs the jobs and holds the queue and the short-term tier. Whichever process answers, a
 * session's next retrieve sees the turn just written; every job runs once; the primary's death takes
 * its HTTP processes with it, and SIGTERM stops them all.
 */
describe('serve --processes 2 (node:cluster, no Redis)', () => {
  const dir = tmpDir();
  const children = new Set<ChildProcess>();
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  const env = (db: string) => ({
    NEURALCLEAVE_SQLITE_PATH: join(dir, db),
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'info',
    NEURALCLEAVE_PORT: '0',
  });

  it('answers from both processes with one short-term tier and one queue; every job runs once', { timeout: 120_000 }, async () => {
    const serve = await startCli(['serve', '--processes', '2'], env('shared.db'), /listening on (http:\/\/\S+)/, 60_000);
    children.add(serve.child);
    const base = serve.match[1]!;
    const workers = childrenOf(serve.child.pid!);
    assert.equal(workers.length, 2, 'two HTTP processes');

    const turns = Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, user_id: 'ann', role: 'user', content: `note ${i}: my locker number is ${1000 + i} at the north gate` }));
    for (const [i, t] of turns.entries()) {
      const w = await post(base, `/sessions/s${i % 4}/turns`, t);
      assert.equal(w.status, 202, JSON.stringify(w.json));
      // the next retrieve in the session sees it, from whichever process answers
      const r = await post(base, '/memory/retrieve', { user_id: 'ann', session_id: `s${i % 4}`, query: `locker ${1000 + i}`, top_k: 50 });
      assert.equal(r.status, 200);
      const found = (r.json as Retrieved).results.filter((x) => x.id === t.id).map((x) => x.tier);
      assert.ok(found.includes('short_term'), `turn ${t.id} is in its session's short-term tier right after its 202 (${found.join(', ') || 'absent'})`);
    }
    // the primary's conflict crosses to the HTTP process with its code and the field it names
    const conflict = await post(base, '/sessions/s0/turns', { turns: [{ id: 'fresh', user_id: 'ann', role: 'user', content: 'a new one' }, { id: 't0', user_id: 'ann', role: 'user', content: 'other text' }] });
    assert.equal(conflict.status, 409, 'an id re-sent with other content is refused, as by one process');
    assert.equal(conflict.json.error.code, 'content_conflict');
    assert.deepEqual(conflict.json.error.details.map((d: { path: string }) => d.path), ['turns.1.id']);

    const db = join(dir, 'shared.db');
    await until('every job done', () => readDb(db, (d) => (d.prepare('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL').get() as { n: number }).n) === 0, 60_000, 100);
    const counts = readDb(db, (d) => d.prepare("SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM vectors) AS vectors, (SELECT count(*) FROM entries WHERE kind = 'turn') AS entries").get()) as Record<string, number>;
    assert.deepEqual(counts, { turns: 40, vectors: 40, entries: 40 });
    // both HTTP processes answered requests; the jobs ran in the primary only
    const lines = serve.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { pid: number; msg: string; component?: string });
    const answered = new Set(lines.filter((l) => l.msg === 'request completed').map((l) => l.pid));
    assert.deepEqual([...answered].sort(), [...workers].sort(), 'requests were answered by both HTTP processes and only by them');

    assert.equal(await stop(serve.child, 'SIGTERM'), 0);
    await until('the HTTP processes to exit', () => workers.every((p) => !alive(p)), 10_000, 50);
  });

  it('spreads keep-alive connections that all reached one process over both', { timeout: 120_000 }, async () => {
    const serve = await startCli(['serve', '--processes', '2'], env('spread.db'), /listening on (http:\/\/\S+)/, 60_000);
    children.add(serve.child);
    const { hostname, port } = new URL(serve.match[1]!);
    const workers = childrenOf(serve.child.pid!);
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const retrieve = () =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ user_id: 'ann', query: 'where is the harbour?' });
        const req = request({ host: hostname, port, path: '/memory/retrieve', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    const answeredBy = (from: number) => {
      const lines = serve.output().slice(from).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { pid: number; msg: string });
      return workers.map((pid) => lines.filter((l) => l.msg === 'request completed' && l.pid === pid).length);
    };
    try {
      // a client's pool opens its 16 connections while one process cannot accept: the other takes them all
      process.kill(workers[1]!, 'SIGSTOP');
      const before = serve.output().length;
      assert.ok((await Promise.all(Array.from({ length: 16 }, retrieve))).every((s) => s === 200));
      // the request log is written a moment after the answer
      await until('the 16 requests logged', () => answeredBy(before).reduce((a, b) => a + b) === 16, 10_000, 20);
      assert.deepEqual(answeredBy(before), [16, 0]);
      process.kill(workers[1]!, 'SIGCONT');
      // the connections kept alive: the process holding them all answers some with Connection: close
      // (once the counts have crossed the primary, a fraction of a second), and their next connections
      // reach the other process. Each connection's client sends its next request as soon as it has the
      // answer, as a busy chat frontend does
      const load = async (ms: number): Promise<[number, number]> => {
        const from = serve.output().length;
        const end = Date.now() + ms;
        const statuses = await Promise.all(
          Array.from({ length: 16 }, async () => {
            const got: number[] = [];
            while (Date.now() < end) got.push(await retrieve());
            return got;
          }),
        );
        assert.ok(statuses.flat().every((s) => s === 200));
        const n = statuses.flat().length;
        await until('the requests logged', () => answeredBy(from).reduce((a, b) => a + b) === n, 10_000, 20);
        return [n, answeredBy(from)[1]!];
      };
      await load(1_500);
      const [n, second] = await load(1_500);
      assert.ok(second >= 0.3 * n, `the process that was stopped answered ${second} of ${n}`);
    } finally {
      agent.destroy();
      process.kill(workers[1]!, 'SIGCONT');
    }
    assert.equal(await stop(serve.child, 'SIGTERM'), 0);
  });

  it('takes its HTTP processes down with it when the primary is killed; the restart finishes the turns', { timeout: 120_000 }, async () => {
    const serve = await startCli(['serve', '--processes', '2'], env('killed.db'), /listening on (http:\/\/\S+)/, 60_000);
    children.add(serve.child);
    const base = serve.match[1]!;
    const workers = childrenOf(serve.child.pid!);
    for (let i = 0; i < 10; i++) assert.equal((await post(base, '/sessions/s/turns', { id: `k${i}`, user_id: 'ann', role: 'user', content: `kept turn ${i} about the harbour` })).status, 202);
    await stop(serve.child, 'SIGKILL');
    await until('the HTTP processes to exit', () => workers.every((p) => !alive(p)), 10_000, 50);

    const again = await startCli(['serve', '--processes', '2'], env('killed.db'), /listening on (http:\/\/\S+)/, 60_000);
    children.add(again.child);
    const db = join(dir, 'killed.db');
    await until('every acknowledged turn processed', () => readDb(db, (d) => (d.prepare('SELECT count(*) AS n FROM vectors').get() as { n: number }).n) === 10, 60_000, 100);
    await stop(again.child, 'SIGTERM');
  });
});
