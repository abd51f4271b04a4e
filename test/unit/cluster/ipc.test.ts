import assert from 'node:assert/strict';
import cluster, { type Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { brokenPipe, uncaughtDuring } from '../../helpers/broken-pipe.js';
import pino from 'pino';
import { answerCalls, PrimaryCalls, sendToPrimary } from '../../../src/cluster/ipc.js';
import { ContentConflictError, NeuralCleaveError } from '../../../src/errors.js';

/** Both ends of a cluster IPC channel in one process: messages are structured-cloned and delivered on a later turn, counted. */
function channel() {
  const primary = new EventEmitter();
  const worker = new EventEmitter();
  const sent = { toPrimary: 0, toWorker: 0 };
  const workerEnd = Object.assign(worker, {
    connected: true,
    send(m: unknown, _h: unknown, _o: unknown, cb?: (err: Error | null) => void) {
      sent.toPrimary++;
      const copy = structuredClone(m);
      setImmediate(() => primary.emit('message', copy));
      cb?.(null);
      return true;
    },
  });
  const primaryEnd = Object.assign(primary, {
    isConnected: () => true,
    send(m: unknown) {
      sent.toWorker++;
      const copy = structuredClone(m);
      setImmediate(() => worker.emit('message', copy));
      return true;
    },
  });
  return { workerEnd: workerEnd as unknown as NodeJS.Process, primaryEnd: primaryEnd as unknown as Worker, sent };
}

describe('cluster IPC calls', () => {
  it('sends the first call of an event-loop turn at once and the rest as one message, replies likewise, each answered in kind', async () => {
    const { workerEnd, primaryEnd, sent } = channel();
    const store = {
      async accept(turns: Array<{ id: string }>) {
        if (turns[0]!.id === 'clash') throw new ContentConflictError('clash', 0, '0.id');
        return { accepted: turns.length, duplicates: 0 };
      },
      secret: () => 'never',
    };
    answerCalls(primaryEnd, { turns: { object: store, methods: ['accept'] } }, pino({ level: 'silent' }));
    const calls = new PrimaryCalls(workerEnd);
    const ok = Array.from({ length: 50 }, (_, i) => calls.call<{ accepted: number }>('turns', 'accept', [Array.from({ length: 1 + (i % 3) }, (_, j) => ({ id: `t${i}-${j}` }))]));
    const conflict = assert.rejects(calls.call('turns', 'accept', [[{ id: 'clash' }]]), (err: unknown) => err instanceof NeuralCleaveError && err.code === 'content_conflict' && err.details?.[0]?.path === '0.id');
    const refused = assert.rejects(calls.call('turns', 'secret', []), /turns\.secret is not served/);
    const results = await Promise.all(ok);
    assert.deepEqual(results.map((r) => r.accepted), Array.from({ length: 50 }, (_, i) => 1 + (i % 3)));
    await conflict;
    await refused;
    assert.equal(sent.toPrimary, 2, '52 calls: the first alone, then the other 51 in one message');
    // replies: the first of each turn alone (the refusal is answered before the calls that run), the rest together
    assert.ok(sent.toWorker <= 3, `52 replies in ${sent.toWorker} messages`);
    // a later turn's lone call is sent at once, a message of its own
    const before = { ...sent };
    assert.equal((await calls.call<{ accepted: number }>('turns', 'accept', [[{ id: 'x' }]])).accepted, 1);
    assert.deepEqual(sent, { toPrimary: before.toPrimary + 1, toWorker: before.toWorker + 1 });
  });

  it('fails every waiting call when the primary goes away', async () => {
    const { workerEnd } = channel();
    const calls = new PrimaryCalls(workerEnd);
    const waiting = calls.call('turns', 'accept', [[]]);
    setImmediate(() => (workerEnd as unknown as EventEmitter).emit('disconnect'));
    await assert.rejects(waiting, /primary process is gone/);
  });
});

/** whether a child process has exited and not yet been reaped: its exit is not yet seen by this one */
function exitedUnseen(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
}

describe('cluster IPC with a process that is gone (Linux: /proc)', () => {
  it('the primary answers a call from a process that exited after making it, and stays up', { timeout: 30_000 }, async () => {
    const failures = await uncaughtDuring(async () => {
      cluster.setupPrimary({ exec: fileURLToPath(new URL('../../fixtures/exiting-worker.ts', import.meta.url)), execArgv: ['--import', 'tsx'], serialization: 'advanced', silent: true });
      const worker = cluster.fork();
      const exited = new Promise((r) => worker.once('exit', r));
      const answered = new Promise<void>((resolve) => {
        const slow = {
          // the call is answered once its process has exited but before this one has seen it exit, so the
          // channel still reads as connected: the moment a stopping or crashing HTTP process meets a reply
          answer() {
            const until = Date.now() + 20_000;
            while (!exitedUnseen(worker.process.pid!) && Date.now() < until);
            // the kernel may close its end of the channel a moment after it shows the process as exited
            const closed = Date.now() + 100;
            while (Date.now() < closed);
            setImmediate(resolve);
            return 'late';
          },
        };
        answerCalls(worker, { slow: { object: slow, methods: ['answer'] } }, pino({ level: 'silent' }));
      });
      await answered;
      assert.equal(await exited, 0);
      await new Promise((r) => setTimeout(r, 50));
    });
    assert.deepEqual(failures.map((e) => e.message), [], 'the reply to the exited process failed quietly');
  });

  it('an HTTP process whose primary is gone drops what it tells it, and stays up to finish its requests', async () => {
    const channel = brokenPipe({ connected: true });
    const failures = await uncaughtDuring(async () => {
      sendToPrimary(channel as unknown as NodeJS.Process, { nc: 'connections', open: 1 });
      await new Promise((r) => setImmediate(r));
    });
    assert.deepEqual(failures.map((e) => e.message), []);
  });
});
