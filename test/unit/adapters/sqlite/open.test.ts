import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { switchToWal } from '../../../../src/adapters/sqlite/db.js';
import { tmpDir } from '../../../helpers/tmp.js';

const RACER = fileURLToPath(new URL('../../../helpers/open-racer.ts', import.meta.url));

type Reply = { ok: boolean; error?: string };

function racer(): Promise<{ child: ChildProcess; open: (path: string, at: number) => Promise<Reply> }> {
  const child = fork(RACER, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', () => resolve({
      child,
      open: (path, at) => new Promise((done) => {
        child.once('message', (r) => done(r as Reply));
        child.send({ path, at });
      }),
    }));
  });
}

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('opening a new SQLite file', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  // Before the switch was retried, about one process in fifty failed with SQLITE_BUSY here (the
  // deadlock SQLite answers at once): a fleet of workers started together lost one.
  it('three processes opening the same new file at once all open it, round after round', { timeout: 120_000 }, async () => {
    const racers = await Promise.all([racer(), racer(), racer()]);
    children.push(...racers.map((r) => r.child));
    const dir = tmpDir('nc-open-race-');
    const failures: string[] = [];
    for (let round = 0; round < 150; round++) {
      const path = join(dir, `r${round}.db`);
      const at = Date.now() + 15;
      const replies = await Promise.all(racers.map((r) => r.open(path, at)));
      for (const r of replies) if (!r.ok) failures.push(`round ${round}: ${r.error}`);
    }
    assert.deepEqual(failures, []);
  });

  it('retries a busy switch to WAL until it goes through', () => {
    let calls = 0;
    switchToWal({
      pragma: (() => {
        calls++;
        if (calls < 3) throw busy();
        return 'wal';
      }) as never,
    });
    assert.equal(calls, 3);
  });

  it('gives up on a busy file at its deadline, and at once on any other error', () => {
    let calls = 0;
    const alwaysBusy = { pragma: (() => { calls++; throw busy(); }) as never };
    assert.throws(() => switchToWal(alwaysBusy, Date.now() + 30), /database is locked/);
    assert.ok(calls > 1, `retried before giving up (${calls} tries)`);
    let tries = 0;
    const broken = { pragma: (() => { tries++; throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }); }) as never };
    assert.throws(() => switchToWal(broken), /disk I\/O error/);
    assert.equal(tries, 1);
  });
});
