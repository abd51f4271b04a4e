import { EventEmitter } from 'node:events';

/** Runs `fn` and returns the exceptions nothing caught meanwhile (an 'error' event nobody listens to). */
export async function uncaughtDuring(fn: () => Promise<void>): Promise<Error[]> {
  const failures: Error[] = [];
  const record = (err: Error) => failures.push(err);
  process.on('uncaughtException', record);
  try {
    await fn();
    return failures;
  } finally {
    process.off('uncaughtException', record);
  }
}

/**
 * One end of an IPC channel whose other process is gone, failing as Node's does: a send's failed write
 * goes to its callback, or else is an 'error' event on the end.
 */
export function brokenPipe<T extends object>(props: T): EventEmitter & T {
  const end: EventEmitter & T = Object.assign(new EventEmitter(), props, {
    send(_m: unknown, _h?: unknown, _o?: unknown, cb?: (err: Error) => void) {
      const err = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
      process.nextTick(() => (cb ? cb(err) : end.emit('error', err)));
      return false;
    },
  });
  return end;
}
