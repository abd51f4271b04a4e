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
  it('sends the calls of one event-loop turn as one message, and their replies as one, each answered in kind', async () => {
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
    const conflict = calls.call('turns', 'accept', [[{ id: 'clash' }]]);
    const refused = calls.call('turns', 'secret', []);
    const results = await Promise.all(ok);
    assert.deepEqual(results.map((r) => r.accepted), Array.from({ length: 50 }, (_, i) => 1 + (i % 3)));
    await assert.rejects(conflict, (err: unknown) => err instanceof NeuralCleaveError && err.code === 'content_conflict' && err.details?.[0]?.path === '0.id');
    await assert.rejects(refused, /turns\.secret is not served/);
    assert.deepEqual(sent, { toPrimary: 1, toWorker: 1 }, '52 calls, one message each way');
    // a later turn's call is a message of its own
    assert.equal((await calls.call<{ accepted: number }>('turns', 'accept', [[{ id: 'x' }]])).accepted, 1);
    assert.deepEqual(sent, { toPrimary: 2, toWorker: 2 });
  });

  it('fails every waiting call when the primary goes away', async () => {
    const { workerEnd } = channel();
    const calls = new PrimaryCalls(workerEnd);
    const waiting = calls.call('turns', 'accept', [[]]);
    setImmediate(() => (workerEnd as unknown as EventEmitter).emit('disconnect'));
    await assert.rejects(waiting, /primary process is gone/);
  });
});
