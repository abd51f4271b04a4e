import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startCli, stop } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';

const BUILT = fileURLToPath(new URL('../../../dist/web/index.html', import.meta.url));
const KEY = 'serve-admin-key-0000000000000000';

/** `npm start` path: the built CLI serves the page `npm install`/`npm run build` put in dist/web, beside the API. */
describe('neuralcleave serve: the inspector at /, the API as before', () => {
  const dir = tmpDir();
  let child: ChildProcess;
  let base = '';

  before(async () => {
    assert.ok(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` (npm install/ci build it through prepare)`);
    const started = await startCli(
      ['serve'],
      {
        NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'),
        NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
        NEURALCLEAVE_LOG_LEVEL: 'warn',
        NEURALCLEAVE_PORT: '0',
        NEURALCLEAVE_API_KEYS: `${KEY}=*`,
      },
      /listening on (http:\/\/\S+)/,
    );
    child = started.child;
    base = started.match[1]!;
  });
  after(async () => {
    if (child) await stop(child);
  });

  test('GET / is the page, its assets load, and nothing of it needs a key', async () => {
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'.*connect-src 'self'/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    const html = await page.text();
    assert.match(html, /memory inspector/);
    assert.doesNotMatch(html, /https?:\/\//, 'no asset from another host');

    const assets = [...html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => /^assets\/index-[\w-]+\.js$/.test(a)), `a script bundle among ${assets.join(', ')}`);
    assert.ok(assets.some((a) => /^assets\/index-[\w-]+\.css$/.test(a)), `a stylesheet among ${assets.join(', ')}`);
    for (const a of assets) {
      const r = await fetch(`${base}/${a}`);
      assert.equal(r.status, 200, a);
      if (a.startsWith('assets/')) assert.match(r.headers.get('cache-control') ?? '', /immutable/);
    }
  });

  test('the API keeps its routes and its authentication', async () => {
    const open = await fetch(`${base}/memory/recent`);
    assert.equal(open.status, 401);
    assert.equal(((await open.json()) as { error: { code: string } }).error.code, 'unauthorized');
    const withKey = await fetch(`${base}/inspect/whoami`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(withKey.status, 200);
    assert.deepEqual(await withKey.json(), { admin: true, keys_enabled: true, users: null, default_user: 'default', queue_backend: 'in-process', queue_board: null });
    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
    // no Redis: no queue dashboard, and the answer says why
    const board = await fetch(`${base}/admin/queues/`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(board.status, 404);
    assert.match(((await board.json()) as { error: { message: string } }).error.message, /needs Redis/);
  });
});
