import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { archiveIdFor } from '../../src/archival/archiver.js';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { runCli } from '../helpers/cli.js';
import { isSummaryRequest, startFakeOllama } from '../helpers/fake-llm.js';
import { faultEnv, faultRig, readDb, until, withQueues, type Proc } from './helpers.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const ADMIN = 'admin-key-0123456789abcdef';
const PAIRS = 1000;
const DAY = 86_400_000;

interface Reply {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/**
 * Issue 13 in the shape where its defects lived: `serve` with Redis (BullMQ queues, Redis short-term
 * tier) and two `worker` processes consuming embed and persist, all real processes on a private
 * redis-server and one SQLite file, at the default log level. Each test names the defect it covers.
 */
describe('faults: what is deleted stays deleted, and a memory id belongs to its user (Redis + 2 workers)', () => {
  const rig = faultRig('nc-fault-integrity-');
  const { dir, fleet } = rig;
  const dbPath = join(dir, 'integrity.db');
  const prefix = 'integrity';
  let env: Record<string, string>;
  let serve: Proc & { base: string };
  let workers: Proc[];

  const call = async (method: string, path: string, key: string, body?: unknown): Promise<Reply> => {
    const r = await fetch(`${serve.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON (metrics)
    }
    return { status: r.status, json, text };
  };
  const turn = (id: string, content: string, extra: Record<string, unknown> = {}) => ({ id, role: 'user', content, importance: 0.9, ...extra });
  const sql = <T>(q: string, ...params: unknown[]): T[] => readDb(dbPath, (db) => db.prepare(q).all(...params) as T[]);
  const n = (q: string, ...params: unknown[]): number => (sql<{ n: number }>(q, ...params)[0]?.n ?? 0);
  const logs = () => [serve, ...workers].map((p) => p.output()).join('\n');

  /** every job of the deployment ran: nothing waiting, active or delayed in the queues, nothing pending in the turn log */
  async function settled(): Promise<void> {
    await until(
      'the queues to drain',
      async () => {
        const counts = await withQueues(rig.redis.url, prefix, async (queues) =>
          Promise.all([...queues.values()].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized'))),
        );
        const busy = counts.reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
        return busy === 0 && n('SELECT count(*) AS n FROM turns WHERE embedded_with IS NULL OR persisted_at IS NULL') === 0;
      },
      90_000,
      200,
    );
  }

  async function shortTermIds(user: string, session: string): Promise<string[]> {
    const redis = new Redis(rig.redis.url, { maxRetriesPerRequest: 1 });
    try {
      const held = await redis.lrange(new RedisKeys(prefix).session(user, session), 0, -1);
      return held.map((el) => (JSON.parse(el.slice(el.indexOf(' ') + 1)) as { id: string }).id);
    } finally {
      redis.disconnect();
    }
  }

  it('starts serve and two workers on Redis, at the default log level', { timeout: 120_000 }, async () => {
    env = faultEnv({
      sqlitePath: dbPath,
      redisUrl: rig.redis.url,
      prefix,
      extra: { NEURALCLEAVE_LOG_LEVEL: 'info', NEURALCLEAVE_API_KEYS: `${ALICE}=alice;${BOB}=bob;${ADMIN}=*` },
    });
    serve = await fleet.serve(env);
    workers = [await fleet.worker(env), await fleet.worker(env)];
  });

  it(`defect 1 (fault test): ${PAIRS} write-then-delete pairs racing 2 workers leave no entry, vector or short-term copy`, { timeout: 300_000 }, async () => {
    const ids = Array.from({ length: PAIRS }, (_, i) => `wd-${i}`);
    let next = 0;
    const statuses = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < PAIRS; i = next++) {
          const id = ids[i]!;
          const w = await call('POST', '/sessions/wd/turns', ALICE, turn(id, `I parked on level ${i} near pillar ${i * 7} today`));
          assert.equal(w.status, 202, w.text);
          const d = await call('DELETE', `/memory/${id}`, ALICE);
          statuses.set(id, d.status);
        }
      }),
    );
    assert.deepEqual([...new Set(statuses.values())], [200], 'every delete found its turn');
    await settled();
    // the workers' jobs for the deleted turns have all run (or been dropped): let a last reconcile pass go by
    await new Promise((r) => setTimeout(r, 3000));
    const entries = n("SELECT count(*) AS n FROM entries WHERE user_id = 'alice' AND id LIKE 'wd-%'");
    const vectors = n("SELECT count(*) AS n FROM vectors WHERE user_id = 'alice' AND id LIKE 'wd-%'");
    const turns = n("SELECT count(*) AS n FROM turns WHERE user_id = 'alice' AND id LIKE 'wd-%'");
    const shortTerm = (await shortTermIds('alice', 'wd')).length;
    let answered = 0;
    for (const id of ids) if ((await call('GET', `/memory/${id}`, ALICE)).status !== 404) answered++;
    process.stderr.write(`# ${PAIRS} write-then-delete pairs: ${entries} entries, ${vectors} vectors, ${turns} turn-log rows, ${shortTerm} short-term copies, ${answered} GET 200\n`);
    assert.deepEqual({ entries, vectors, turns, shortTerm, answered }, { entries: 0, vectors: 0, turns: 0, shortTerm: 0, answered: 0 });
  });

  it('defect 2: prune removes turn-log rows, short-term copies and vectors too; reindex --force brings none back', { timeout: 180_000 }, async () => {
    const words = ['the violin lesson moved to Thursday', 'my violin teacher is called Ilse', 'the violin case is blue'];
    for (const [i, w] of words.entries()) assert.equal((await call('POST', '/sessions/pr/turns', ALICE, turn(`pr-${i}`, w, { importance: 0.5 }))).status, 202);
    assert.equal((await call('POST', '/sessions/pr/turns', ALICE, turn('pr-pin', 'the violin was my grandmother\'s', { pinned: true }))).status, 202);
    await settled();
    const pruned = await call('POST', '/memory/prune', ALICE, { session_id: 'pr', below_importance: 1 });
    assert.equal(pruned.status, 200, pruned.text);
    assert.deepEqual([pruned.json.deleted, [...pruned.json.ids].sort()], [3, ['pr-0', 'pr-1', 'pr-2']]);
    const gone = (ids: string[]) => ids.filter((id) => /^pr-\d$/.test(id));
    const retrieved = await call('POST', '/memory/retrieve', ALICE, { query: 'violin lesson teacher case', session_id: 'pr' });
    assert.deepEqual(gone(retrieved.json.results.map((r: { id: string }) => r.id)), [], 'retrieve in the session returns none of them');
    assert.deepEqual(await shortTermIds('alice', 'pr'), ['pr-pin']);
    const reindexed = await runCli(['memory', 'reindex', '--force', '--json'], env);
    assert.equal(reindexed.code, 0, reindexed.stderr);
    // a fresh process, reading every tier from scratch
    const fresh = await runCli(['retrieve', 'violin lesson teacher case', '--user', 'alice', '--session', 'pr', '--json'], env);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.deepEqual(gone((JSON.parse(fresh.stdout) as { results: Array<{ id: string }> }).results.map((r) => r.id)), []);
    assert.equal(n("SELECT count(*) AS n FROM vectors WHERE user_id = 'alice' AND id IN ('pr-0', 'pr-1', 'pr-2')"), 0);
    assert.equal(n("SELECT count(*) AS n FROM turns WHERE user_id = 'alice' AND id IN ('pr-0', 'pr-1', 'pr-2')"), 0);
    assert.equal((await call('GET', '/memory/pr-pin', ALICE)).status, 200, 'the pinned one stays');
  });

  it('defect 3: two users may use the same id; neither can learn or affect whether the other holds an id, on any route', { timeout: 120_000 }, async () => {
    const a = await call('POST', '/sessions/s/turns', ALICE, turn('shared-1', 'alice keeps bees'));
    const b = await call('POST', '/sessions/s/turns', BOB, turn('shared-1', 'bob keeps goats'));
    assert.deepEqual([a.status, b.status, b.json?.accepted], [202, 202, 1], b.text);
    assert.equal((await call('POST', '/sessions/s/turns', BOB, turn('bob-only', 'bob hides the key under the mat'))).status, 202);
    await settled();
    assert.equal((await call('GET', '/memory/shared-1', ALICE)).json.content, 'alice keeps bees');
    assert.equal((await call('GET', '/memory/shared-1', BOB)).json.content, 'bob keeps goats');

    // alice's answers for bob's id and for an id nobody holds are the same, route by route
    const bobBefore = sql('SELECT * FROM entries WHERE user_id = ? ORDER BY id', 'bob');
    const probe = async (id: string) => {
      const out: unknown[] = [];
      for (const [method, path, body] of [
        ['GET', `/memory/${id}`],
        ['PATCH', `/memory/${id}`, { importance: 0.1, content: 'hijacked' }],
        ['DELETE', `/memory/${id}`],
        ['GET', `/memory/${id}?user_id=bob`],
        ['PATCH', `/memory/${id}?user_id=bob`, { importance: 0.1 }],
        ['DELETE', `/memory/${id}?user_id=bob`],
      ] as Array<[string, string, unknown?]>) {
        const r = await call(method, path, ALICE, body);
        out.push([method, path.replace(id, 'X'), r.status, r.text.replaceAll(id, 'X')]);
      }
      return out;
    };
    assert.deepEqual(await probe('bob-only'), await probe('never-held'));
    // a write with bob's id is alice's own turn, whatever bob holds
    const w = await call('POST', '/sessions/s/turns', ALICE, turn('bob-only', 'alice writes under the same id'));
    assert.deepEqual([w.status, w.json.accepted], [202, 1]);
    await settled();
    assert.deepEqual(sql('SELECT * FROM entries WHERE user_id = ? ORDER BY id', 'bob'), bobBefore, "nothing of bob's changed");
    assert.equal((await call('DELETE', '/memory/shared-1', ALICE)).status, 200);
    assert.equal((await call('GET', '/memory/shared-1', BOB)).json.content, 'bob keeps goats', "alice's delete of her id leaves bob's");
  });

  it('defect 3: generated ids cannot be claimed by a client; archival of another user\'s session is unaffected', { timeout: 120_000 }, async () => {
    const old = new Date(Date.now() - 40 * DAY);
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', '/sessions/old-b/turns', BOB, turn(`ob-${i}`, `bob talked about the harbour crane number ${i}`, { created_at: new Date(old.getTime() + i * 60_000).toISOString() }));
      assert.equal(r.status, 202, r.text);
    }
    await settled();
    const archiveId = archiveIdFor('bob', 'old-b');
    const squat = await call('POST', '/sessions/old-b/turns', ALICE, turn(archiveId, 'alice claims the archive id'));
    assert.equal(squat.status, 400, `a client id can never be a generated one: ${squat.text}`);
    assert.match(squat.text, /id/);
    const archived = await runCli(['memory', 'archive', '--user', 'bob', '--json'], env);
    assert.equal(archived.code, 0, archived.stderr);
    assert.equal((JSON.parse(archived.stdout) as { archived: number }).archived, 1);
    await settled();
    const archive = await call('GET', `/memory/${archiveId}`, BOB);
    assert.deepEqual([archive.status, archive.json.kind, archive.json.user_id], [200, 'archive', 'bob'], archive.text);
    assert.equal((await call('GET', `/memory/${archiveId}`, ALICE)).status, 404);
    await until('the archive embedded', () => n("SELECT count(*) AS n FROM vectors WHERE user_id = 'bob' AND id = ?", archiveId) === 1, 30_000, 200);
    assert.equal(n('SELECT count(*) AS n FROM vectors WHERE id = ? AND user_id <> ?', archiveId, 'bob'), 0);
  });

  it('defect 4: equal text under a second id is stored under its own id, and survives the delete of the first', { timeout: 60_000 }, async () => {
    const text = 'My sister Ines is a nurse in Braga';
    assert.equal((await call('POST', '/sessions/dup/turns', ALICE, turn('dup-1', text))).status, 202);
    assert.equal((await call('POST', '/sessions/dup/turns', ALICE, turn('dup-2', text))).status, 202);
    await settled();
    assert.equal((await call('GET', '/memory/dup-2', ALICE)).status, 200, 'the second is a memory of its own');
    assert.equal((await call('DELETE', '/memory/dup-1', ALICE)).status, 200);
    await settled();
    const second = await call('GET', '/memory/dup-2', ALICE);
    assert.deepEqual([second.status, second.json.content], [200, text]);
    const hits = await call('POST', '/memory/retrieve', ALICE, { query: 'what does my sister do', session_id: 'other' });
    assert.deepEqual(hits.json.results.filter((r: { content: string }) => r.content === text).map((r: { id: string }) => r.id), ['dup-2']);
  });

  it('defect 5: twenty concurrent writes of one id with different texts: one stored, nineteen 409 content_conflict naming it', { timeout: 60_000 }, async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call('POST', '/sessions/race/turns', ALICE, turn('race-1', `race variant ${i}`))));
    const stored = replies.filter((r) => r.status === 202);
    const refused = replies.filter((r) => r.status === 409);
    assert.equal(stored.length, 1, replies.map((r) => r.text).join('\n'));
    assert.equal(stored[0]!.json.accepted, 1);
    assert.equal(refused.length, 19);
    for (const r of refused) {
      assert.equal(r.json.error.code, 'content_conflict');
      assert.match(r.json.error.message, /"race-1"/);
      assert.deepEqual(r.json.error.details.map((d: { path: string }) => d.path), ['id']);
    }
    const winner = n("SELECT count(*) AS n FROM turns WHERE user_id = 'alice' AND id = 'race-1'");
    assert.equal(winner, 1);
    const content = sql<{ content: string }>("SELECT content FROM turns WHERE user_id = 'alice' AND id = 'race-1'")[0]!.content;
    const again = await call('POST', '/sessions/race/turns', ALICE, turn('race-1', content));
    assert.deepEqual([again.status, again.json.accepted, again.json.duplicates], [202, 0, 1], 'an exact re-send stays an idempotent success');
  });

  it('defect 6: a summary an LLM writes goes through the input validation: no control character, no broken surrogate', { timeout: 120_000 }, async () => {
    const llm = await startFakeOllama((req) => (isSummaryRequest(req) ? { content: '- The user rings a bell\u0007 and sends half an emoji \ud83d.' } : { content: 'ok' }));
    try {
      for (let i = 0; i < 8; i++) assert.equal((await call('POST', '/sessions/llm/turns', ALICE, turn(`llm-${i}`, `turn number ${i} about the beehive`))).status, 202);
      await settled();
      const r = await runCli(['memory', 'compact', '--session', 'llm', '--user', 'alice', '--json'], { ...env, NEURALCLEAVE_LLM_PROVIDER: 'ollama', NEURALCLEAVE_LLM_BASE_URL: llm.url });
      assert.equal(r.code, 0, r.stderr);
      const { summary_id } = JSON.parse(r.stdout) as { summary_id: string };
      assert.ok(llm.chats().some(isSummaryRequest), 'the LLM wrote the summary');
      const summary = await call('GET', `/memory/${summary_id}`, ALICE);
      assert.equal(summary.status, 200, summary.text);
      const content = summary.json.content as string;
      assert.ok(!content.includes('\u0007'), 'no BEL');
      assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(content), 'no unpaired surrogate');
      assert.match(content, /rings a bell and sends half an emoji \uFFFD\./);
    } finally {
      await llm.close();
    }
  });

  it('defect 9: content of zero-width characters only is blank; created_at in year 0000 or 9999 is refused', async () => {
    for (const content of ['\u200b', '\u200b\u200d\u2060', '\ufeff']) {
      const r = await call('POST', '/sessions/zw/turns', ALICE, { role: 'user', content });
      assert.equal(r.status, 400, JSON.stringify(content));
      assert.match(r.json.error.details[0].message, /blank/);
    }
    for (const created_at of ['0000-01-01T00:00:00Z', '9999-12-31T00:00:00Z']) {
      const r = await call('POST', '/sessions/zw/turns', ALICE, { role: 'user', content: 'hello', created_at });
      assert.equal(r.status, 400, created_at);
      assert.equal(r.json.error.details[0].path, 'created_at');
    }
    assert.equal(n("SELECT count(*) AS n FROM turns WHERE session_id = 'zw'"), 0);
  });

  it('defect 7: logs hold route templates and statuses only; after memory forget the marker is in no log; /metrics needs an admin key', { timeout: 120_000 }, async () => {
    const marker = 'zanzibarmarker';
    const carolKey = `${marker}-key-0123456789`;
    // carol's words, session and ids travel in bodies, paths and query strings; a key is sent as a parameter by mistake
    assert.equal((await call('POST', `/sessions/${marker}-session/turns`, ADMIN, turn(`${marker}-id`, `the ${marker} word is private`, { user_id: `${marker}-user` }))).status, 202);
    await settled();
    assert.equal((await call('GET', `/memory/search?q=${marker}&user_id=${marker}-user&session_id=${marker}-session`, ADMIN)).status, 200);
    assert.equal((await call('GET', `/memory/recent?user_id=${marker}-user&api_key=${carolKey}`, ADMIN)).status, 400, 'an unknown parameter is refused (and not logged)');
    assert.equal((await call('GET', `/memory/${marker}-id?user_id=${marker}-user`, ADMIN)).status, 200);
    assert.equal((await call('POST', '/memory/retrieve', ADMIN, { query: `${marker} word`, user_id: `${marker}-user`, session_id: `${marker}-session` })).status, 200);
    assert.equal((await call('GET', `/no/route/${marker}`, ADMIN)).status, 404);
    assert.match(logs(), /"route":"\/memory\/search"/, 'requests are logged, by route');

    for (const key of [ALICE, BOB]) assert.equal((await call('GET', '/metrics', key)).status, 403);
    assert.equal((await call('GET', '/metrics', ADMIN)).status, 200);

    const forgot = await runCli(['memory', 'forget', '--user', `${marker}-user`, '--yes'], env);
    assert.equal(forgot.code, 0, forgot.stderr);
    await new Promise((r) => setTimeout(r, 1500));
    // stdout is the command's answer to its user; its log lines go to stderr
    const all = logs() + forgot.stderr;
    assert.ok(!all.includes(marker), `the marker is in a log:\n${all.split('\n').filter((l) => l.includes(marker)).slice(0, 5).join('\n')}`);
  });
});
