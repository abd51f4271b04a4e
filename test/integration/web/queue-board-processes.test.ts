import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCli } from '../../helpers/cli.js';
import { startRedis, type RedisHandle } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';

const ADMIN = 'admin-key-dddddddddddddddddddd';

/** one GET over a connection of its own, so that the cluster hands each to the next HTTP process */
function getOnce(base: string, path: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Issue 26, defect 8: with `serve --processes 2` (the default on two cores) the dashboard's session
 * cookie, issued by one HTTP process, must open it in the other as well.
 */
describe('queue dashboard session with serve --processes 2 (Redis)', () => {
  const children = new Set<ChildProcess>();
  let redis: RedisHandle;
  let base: string;

  before(async () => {
    redis = await startRedis();
    const env = {
      NEURALCLEAVE_SQLITE_PATH: join(tmpDir(), 'nc.db'),
      NEURALCLEAVE_REDIS_URL: redis.url,
      NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
      NEURALCLEAVE_LOG_LEVEL: 'warn',
      NEURALCLEAVE_PORT: '0',
      NEURALCLEAVE_API_KEYS: `${ADMIN}=*`,
    };
    const serve = await startCli(['serve', '--processes', '2'], env, /listening on (http:\/\/\S+)/, 60_000, { group: true });
    children.add(serve.child);
    base = serve.match[1]!;
  });
  after(async () => {
    // the whole group: the primary and its HTTP processes
    for (const c of children) if (c.pid !== undefined && c.exitCode === null) process.kill(-c.pid, 'SIGKILL');
    await redis.stop(true);
  });

  it('the cookie one HTTP process issued opens the dashboard in every one', { timeout: 60_000 }, async () => {
    const session = await fetch(`${base}/inspect/queue-board/session`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(session.status, 200);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push(await getOnce(base, '/admin/queues/api/queues', { cookie }));
    assert.deepEqual(statuses, Array(12).fill(200));
  });
});
