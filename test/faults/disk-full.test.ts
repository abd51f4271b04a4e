import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, startCli, stop } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

/**
 * Issue 26, defect 7: the SQLite file on a full disk. A real full disk: a small tmpfs mounted for this
 * file (root only; CI runs as root), filled by a file of this test until the kernel says ENOSPC.
 */
const mountPoint = mkdtempSync(join(tmpdir(), 'nc-full-'));
let skip: string | false = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', mountPoint], { stdio: 'pipe' });
} catch (err) {
  skip = `cannot mount a tmpfs here (needs root and mount(8)): ${((err as { stderr?: Buffer }).stderr?.toString() || (err as Error).message).trim()}`;
}
after(() => {
  if (!skip) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  rmdirSync(mountPoint);
});

/** writes a file until the disk refuses a byte more; returns its path */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 0x61);
  try {
    for (let size = block.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          writeSync(fd, block, 0, size);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', connection: 'close' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

describe('the SQLite file on a full disk (a real tmpfs)', { skip }, () => {
  it('writes and deletes answer 507 naming the disk, /health is degraded, doctor says what to do; nothing acknowledged is lost', { timeout: 180_000 }, async () => {
    const db = join(mountPoint, 'nc.db');
    const env = { NEURALCLEAVE_SQLITE_PATH: db, NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'warn', NEURALCLEAVE_PORT: '0' };
    const cwd = mkdtempSync(join(tmpdir(), 'nc-full-cwd-'));
    after(() => rmSync(cwd, { recursive: true, force: true }));
    const serve = await startCli(['serve', '--processes', '1'], env, /listening on (http:\/\/\S+)/, 60_000, { cwd });
    try {
      const base = serve.match[1]!.replace(/\/$/, '');
      const turn = (id: string) => ({ id, user_id: 'ann', role: 'user', content: `My locker at the pool is number ${id.length * 7}; note ${id}.`, importance: 0.9 });
      assert.equal((await call(base, 'POST', '/sessions/s1/turns', turn('kept-1'))).status, 202);
      await until('kept-1 stored', async () => (await call(base, 'GET', '/memory/kept-1?user_id=ann')).status === 200, 30_000, 100);

      const filler = fill(mountPoint);
      const write = await call(base, 'POST', '/sessions/s1/turns', turn('refused-1'));
      assert.equal(write.status, 507, JSON.stringify(write.json));
      assert.equal(write.json.error.code, 'insufficient_storage');
      assert.match(write.json.error.message, new RegExp(`the disk holding ${db.replace(/[.]/g, '\\.')} is full: nothing was written`));
      const del = await call(base, 'DELETE', '/memory/kept-1?user_id=ann');
      assert.equal(del.status, 507, JSON.stringify(del.json));
      assert.equal(del.json.error.code, 'insufficient_storage');

      const health = await call(base, 'GET', '/health?full=true');
      assert.equal(health.json.status, 'degraded', JSON.stringify(health.json));
      assert.equal(health.json.backends.long_term.state, 'failed');
      assert.match(health.json.problems.find((p: { part: string }) => p.part === 'long_term').advice, /the disk holding the SQLite file is full: .*free space on that disk/);
      // doctor opens the file itself, which needs a few bytes of the full disk: it names the disk and the way out, not the driver's words
      const doctor = await runCli(['doctor'], env, undefined, cwd);
      assert.notEqual(doctor.code, 0);
      assert.match(doctor.stdout + doctor.stderr, new RegExp(`the disk holding ${db.replace(/[.]/g, '\\.')} is full: .*free space on it`));
      assert.doesNotMatch(doctor.stdout + doctor.stderr, /database or disk is full|disk I\/O error/);

      // space again: everything acknowledged is there, and writes work
      rmSync(filler);
      assert.equal((await call(base, 'GET', '/memory/kept-1?user_id=ann')).status, 200, 'the turn acknowledged before the disk filled');
      assert.equal((await call(base, 'GET', '/memory/refused-1?user_id=ann')).status, 404, 'the refused write left nothing');
      assert.equal((await call(base, 'POST', '/sessions/s1/turns', turn('after-1'))).status, 202);
      assert.equal((await call(base, 'GET', '/health')).json.status, 'ok');
    } finally {
      await stop(serve.child);
    }
  });
});
