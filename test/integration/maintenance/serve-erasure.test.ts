import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, startCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';
import { killAll, queueEnv } from '../queue/helpers.js';

interface Health {
  queues: Record<string, { waiting: number; active: number; delayed: number }>;
  turn_log: { pending_embed: number; pending_persist: number };
}

interface Retrieved {
  results: Array<{ tier: string; content: string; session_id: string }>;
}

/**
 * The embedded shape (no Redis): `serve` holds the short-term tier and the queue in its own memory,
 * and `memory clear` / `memory forget` run in another process. The erasure must still reach the
 * server's copy: after the command, the server retrieves nothing of what was erased, and keeps what
 * was not.
 */
/** POSTs JSON to the server at `base`, asserting a 2xx answer, and returns its body. */
function poster(base: string): (path: string, body: unknown) => Promise<unknown> {
  return async (path, body) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
    return res.json() as Promise<unknown>;
  };
}

describe('erasures reach a running serve process (no Redis)', () => {
  const dir = tmpDir();
  const env = queueEnv({ sqlitePath: join(dir, 'nc.db'), extra: { NEURALCLEAVE_PORT: '0' } });
  const children = new Set<ChildProcess>();
  after(() => killAll(children));

  it('clear --session and forget --user empty the server\'s short-term tier', { timeout: 90_000 }, async () => {
    const serve = await startCli(['serve'], env, /listening on (http:\/\/\S+)/);
    children.add(serve.child);
    const base = serve.match[1]!;
    const post = poster(base);
    const shortTerm = async (user: string, session: string) =>
      ((await post('/memory/retrieve', { query: 'ferry seats Lisbon', user_id: user, session_id: session, top_k: 50 })) as Retrieved).results.filter((r) => r.tier === 'short_term');

    for (const [user, session] of [['ann', 'a1'], ['ann', 'a2'], ['bob', 'b1']] as const) {
      await post(`/sessions/${session}/turns`, { turns: [0, 1, 2].map((i) => ({ user_id: user, role: 'user', content: `${user} ${session} ferry note ${i}: two seats to Lisbon` })) });
    }
    assert.equal((await shortTerm('ann', 'a1')).length, 3);

    const cleared = await runCli(['memory', 'clear', '--session', 'a1', '--user', 'ann', '--yes'], env);
    assert.equal(cleared.code, 0, cleared.stderr);
    // the command answers only once the server has applied it, and says so
    assert.match(cleared.stdout, new RegExp(`applied by the running server \\(pid ${serve.child.pid}\\)`));
    assert.deepEqual(await shortTerm('ann', 'a1'), [], "a retrieve sent right after finds nothing of ann/a1");
    assert.equal((await shortTerm('ann', 'a2')).length, 3, 'the other session is kept');

    const forgot = await runCli(['memory', 'forget', '--user', 'ann', '--yes'], env);
    assert.equal(forgot.code, 0, forgot.stderr);
    assert.match(forgot.stdout, /applied by the running server/);
    assert.deepEqual(await shortTerm('ann', 'a2'), []);
    const all = ((await post('/memory/retrieve', { query: 'ferry seats Lisbon', user_id: 'ann', top_k: 50 })) as Retrieved).results;
    assert.deepEqual(all, [], 'nothing of ann in any tier');
    assert.equal((await shortTerm('bob', 'b1')).length, 3, 'bob untouched');

    const nobody = await runCli(['memory', 'forget', '--user', 'nobody', '--yes'], env);
    assert.equal(nobody.code, 1, 'nothing stored is not a success');
    assert.equal(nobody.stdout, '');
    assert.match(nobody.stderr, /nothing stored for user "nobody": nothing was erased/);
  });

  it('delete, edit and prune run by the CLI reach the server\'s short-term tier (issue 26, defect 2)', { timeout: 120_000 }, async () => {
    const serve = await startCli(['serve'], env, /listening on (http:\/\/\S+)/);
    children.add(serve.child);
    const base = serve.match[1]!;
    const post = poster(base);
    const shortTerm = async (session: string) =>
      ((await post('/memory/retrieve', { query: 'locker code ferry', user_id: 'dee', session_id: session, top_k: 50 })) as Retrieved).results
        .filter((r) => r.tier === 'short_term')
        .map((r) => r.content)
        .sort();
    const turns = (session: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${session}-${i}`, user_id: 'dee', role: 'user', content: `${session} note ${i}: locker code ${4400 + i}`, importance: 0.9 }));
    await post('/sessions/d1/turns', { turns: turns('d1', 3) });
    await post('/sessions/d2/turns', { turns: turns('d2', 2) });
    await until('the server to persist the turns', async () => {
      const health = (await (await fetch(`${base}/health`)).json()) as Health;
      return health.turn_log.pending_persist === 0 && health.turn_log.pending_embed === 0;
    }, 60_000);
    assert.equal((await shortTerm('d1')).length, 3);

    const cli = async (args: string[]) => {
      const r = await runCli(args, env);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    };
    await cli(['memory', 'edit', 'd1-0', '--user', 'dee', '--content', 'd1 note 0: locker code withheld']);
    assert.deepEqual(await shortTerm('d1'), ['d1 note 1: locker code 4401', 'd1 note 2: locker code 4402'], 'the old text is gone from the server\'s copy');
    await cli(['memory', 'delete', 'd1-1', '--user', 'dee', '--yes']);
    assert.deepEqual(await shortTerm('d1'), ['d1 note 2: locker code 4402'], 'the deleted turn is gone from the server\'s copy');
    await cli(['memory', 'prune', '--user', 'dee', '--session', 'd2', '--yes']);
    assert.deepEqual(await shortTerm('d2'), [], 'the pruned session\'s turns are gone from the server\'s copy');
    assert.deepEqual(await shortTerm('d1'), ['d1 note 2: locker code 4402'], 'what was not touched stays');
  });

  it('a server that stops answering is named, and the erasure is reported incomplete (exit 1)', { timeout: 90_000 }, async () => {
    // one process: a stopped cluster primary would also hold the HTTP processes' writes
    const serve = await startCli(['serve', '--processes', '1'], env, /listening on (http:\/\/\S+)/);
    children.add(serve.child);
    const base = serve.match[1]!;
    const res = await fetch(`${base}/sessions/c1/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: 'cy', role: 'user', content: 'cy c1 a note' }) });
    assert.equal(res.status, 202);
    // stopped mid-write, the server would hold SQLite's write lock and the erasure would fail as busy
    // instead of reaching the step under test: stop it only once every job has run
    await until('the server to finish its jobs', async () => {
      const health = (await (await fetch(`${base}/health`)).json()) as Health;
      const queued = Object.values(health.queues).reduce((n, c) => n + c.waiting + c.active + c.delayed, 0);
      return queued === 0 && health.turn_log.pending_embed === 0 && health.turn_log.pending_persist === 0;
    }, 20_000);
    // a stopped (SIGSTOP) process keeps its pid and its row, but applies nothing
    serve.child.kill('SIGSTOP');
    try {
      const r = await runCli(['memory', 'clear', '--session', 'c1', '--user', 'cy', '--yes'], { ...env, NEURALCLEAVE_LOG_LEVEL: 'error' });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /^erased session "c1" of user "cy":\n/, r.stderr);
      assert.match(r.stdout, new RegExp(`NOT ERASED  process ${serve.child.pid} .*did not confirm the erasure`));
      assert.match(r.stderr, /the erasure is incomplete/);
    } finally {
      serve.child.kill('SIGCONT');
    }
  });
});
