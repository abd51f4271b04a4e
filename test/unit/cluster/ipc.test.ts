import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, it } from 'node:test';
import pino from 'pino';
import { answerCalls, PrimaryCalls } from '../../../src/cluster/ipc.js';
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
