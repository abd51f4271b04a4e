import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Postgres } from '../../../src/adapters/postgres/pool.js';
import { startCli } from '../../helpers/cli.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { startRedis } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';
import { until } from '../../helpers/until.js';
import { killAll } from '../queue/helpers.js';

interface Tier {
  backend: string;
  status: string;
  count: number;
}
interface Retrieved {
  results: Array<{ id: string; tier: string }>;
  tiers: Record<'short_term' | 'semantic' | 'long_term', Tier>;
}

async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/**
 * Issue 26, defect 6: two `serve` and one `worker` on one PostgreSQL database. Each API process kept
 * a word's document frequency for a minute: a word asked before a turn holding it was persisted by the
 * worker stayed "in no entry" (and was dropped from the match) on both APIs for about 70 s.
 */
describe('PostgreSQL long-term search across processes (2 serve + worker, real PostgreSQL and Redis)', () => {
  const children = new Set<ChildProcess>();
  after(() => killAll(children));

  it('finds a word in the long-term tier on every API as soon as the worker has persisted it, and names the tier postgres', { timeout: 180_000 }, async () => {
    const db = await createTestDatabase();
    const redis = await startRedis();
    after(() => redis.stop(true));
    const env = {
      NEURALCLEAVE_DATABASE_URL: db.url,
      NEURALCLEAVE_REDIS_URL: redis.url,
      NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
      NEURALCLEAVE_LOG_LEVEL: 'warn',
      NEURALCLEAVE_PORT: '0',
    };
    const worker = await startCli(['worker', '--queues', 'embed,persist'], env, /worker ready/, 60_000, { cwd: tmpDir() });
    children.add(worker.child);
    const apis: string[] = [];
    for (let i = 0; i < 2; i++) {
      const serve = await startCli(['serve', '--processes', '1'], env, /listening on (http:\/\/\S+)/, 60_000, { cwd: tmpDir() });
      children.add(serve.child);
      apis.push(serve.match[1]!.replace(/\/$/, ''));
    }
    const pg = new Postgres({ url: db.url, max: 1 });
    after(() => pg.close());
    const persisted = (id: string) =>
      until(`${id} persisted`, async () => (await pg.query<{ n: number }>('SELECT count(*) AS n FROM entries WHERE user_id = $1 AND id = $2', ['ivy', id]))[0]!.n === 1, 60_000, 100);
    const longTerm = async (base: string, query: string): Promise<Retrieved> => {
      const r = await post(base, '/memory/retrieve', { user_id: 'ivy', session_id: 'elsewhere', query, top_k: 5 });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json as Retrieved;
    };

    assert.equal((await post(apis[0]!, '/sessions/s1/turns', { id: 'tea', user_id: 'ivy', role: 'user', content: 'I drink green tea every morning before work.', importance: 0.9 })).status, 202);
    await persisted('tea');
    // both APIs look the words up while no entry holds them: what they learn then must not outlive the next write
    for (const base of apis) {
      for (const q of ['kayak', 'brother', 'Leo']) assert.equal((await longTerm(base, q)).tiers.long_term.count, 0, `${q} before the turn`);
    }
    assert.equal((await post(apis[0]!, '/sessions/s1/turns', { id: 'kayak', user_id: 'ivy', role: 'user', content: 'My brother Leo bought a red kayak last weekend.', importance: 0.9 })).status, 202);
    await persisted('kayak');
    for (const [i, base] of apis.entries()) {
      for (const q of ['kayak', 'brother', 'Leo']) {
        const r = await longTerm(base, q);
        assert.equal(r.tiers.long_term.backend, 'postgres', 'the tier names the database it read');
        assert.ok(r.tiers.long_term.count >= 1, `API ${i}: "${q}" finds the persisted turn in the long-term tier: ${JSON.stringify(r.tiers)}`);
        assert.ok(r.results.some((x) => x.id === 'kayak'), `API ${i}: "${q}" returns it`);
      }
    }
    // and a delete is seen as exactly: the word is in no entry again on both
    const del = await fetch(`${apis[1]}/memory/kayak?user_id=ivy`, { method: 'DELETE', headers: { connection: 'close' } });
    assert.equal(del.status, 200, await del.text());
    for (const base of apis) assert.equal((await longTerm(base, 'kayak')).tiers.long_term.count, 0, 'after the delete');
  });
});
