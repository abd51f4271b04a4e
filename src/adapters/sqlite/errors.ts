import { statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { BackendBusyError, DISK_FULL_BELOW_BYTES, NeuralCleaveError, StorageFullError } from '../../errors.js';

/** SQLite could not take a lock within its busy timeout: transient, the caller may retry. */
const BUSY = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED_SHAREDCACHE']);
/** a row with this key exists already */
const CONFLICT = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);

/** True when `err` is SQLite saying the database is locked by another connection past the busy timeout. */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && BUSY.has(code);
}

/**
 * A driver error as the error catalog's: busy → `BackendBusyError` (503, Retry-After); a key held
 * already → `content_conflict` (409); the disk full → `StorageFullError` (507, naming `path`'s disk).
 * Anything else is returned as it is (a bug, not a condition the caller can act on).
 */
export function sqliteError(err: unknown, path = 'the SQLite file'): unknown {
  if (err instanceof NeuralCleaveError) return err;
  if (isBusy(err)) return new BackendBusyError('sqlite', { cause: err });
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL' || (typeof code === 'string' && code.startsWith('SQLITE_IOERR') && diskFull(path))) return new StorageFullError(path, { cause: err });
  if (typeof code === 'string' && CONFLICT.has(code)) {
    return new NeuralCleaveError('content_conflict', 'a memory with this id is already stored; nothing was written', undefined, { cause: err });
  }
  return err;
}

/**
 * Whether the disk holding `path` is full: SQLite reports a write that found no space as SQLITE_FULL,
 * but growing its -shm or creating its -wal on a full disk as an I/O error.
 */
function diskFull(path: string): boolean {
  try {
    const fs = statfsSync(dirname(resolve(path)));
    return fs.bavail * fs.bsize < DISK_FULL_BELOW_BYTES;
  } catch {
    return false;
  }
}

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';
const isAsyncIterator = (v: unknown): v is AsyncIterator<unknown> & AsyncIterable<unknown> =>
  typeof (v as { next?: unknown } | null)?.next === 'function' && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

function mapped<T>(iterator: AsyncIterator<T> & AsyncIterable<T>, path: string | undefined): AsyncGenerator<T> {
  return (async function* () {
    try {
      for (;;) {
        const r = await iterator.next();
        if (r.done) return;
        yield r.value;
      }
    } catch (err) {
      throw sqliteError(err, path);
    } finally {
      await iterator.return?.();
    }
  })();
}

/**
 * The store part `target` with every method's driver errors mapped (see sqliteError): thrown ones,
 * rejected promises and errors of returned async iterators (pages). Properties that are not methods
 * are read through.
 */
export function mappingErrors<T extends object>(target: T, path?: string): T {
  return new Proxy(target, {
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(obj, args);
        } catch (err) {
          throw sqliteError(err, path);
        }
        if (isPromise(result)) return result.catch((err: unknown) => Promise.reject(sqliteError(err, path)));
        if (isAsyncIterator(result)) return mapped(result, path);
        return result;
      };
    },
  });
}
