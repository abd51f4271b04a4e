import assert from 'node:assert/strict';
import { STATUS_CODES as HTTP_REASONS } from 'node:http';
import { describe, test } from 'node:test';
import { BODY_PARSER_ERRORS, STATUS_CODES, toHttpError } from '../../src/api/errors.js';
import { sqliteError } from '../../src/adapters/sqlite/errors.js';
import * as errors from '../../src/errors.js';
import { ERROR_CATALOG, NeuralCleaveError, type ErrorCode } from '../../src/errors.js';

/** what Express's body parser and router throw: an Error with a status, exposed when a client error */
const createHttpError = (status: number, message: string) => Object.assign(new Error(message), { status, statusCode: status, expose: status < 500 });

const CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** Codes clients may already depend on: never removed or renamed (new ones may be added). */
const STABLE_CODES: ErrorCode[] = [
  'bad_request',
  'config_invalid',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'id_conflict',
  'content_conflict',
  'payload_too_large',
  'unsupported_media_type',
  'llm_unavailable',
  'backend_unavailable',
  'internal',
];

/** Every NeuralCleaveError subclass exported by src/errors.ts, with arguments to build one. */
function exportedErrorClasses(): Array<{ name: string; make: () => NeuralCleaveError }> {
  const out: Array<{ name: string; make: () => NeuralCleaveError }> = [];
  for (const [name, value] of Object.entries(errors)) {
    if (typeof value !== 'function' || value === NeuralCleaveError) continue;
    if (!(value.prototype instanceof NeuralCleaveError)) continue;
    const Ctor = value as unknown as new (...args: unknown[]) => NeuralCleaveError;
    // constructors take (message or subject, details?): a string and a detail list fit every one of them
    out.push({ name, make: () => new Ctor('x', [{ path: 'field', message: 'bad' }]) });
  }
  return out;
}

describe('error catalog', () => {
  test('every code is snake_case with a 4xx/5xx status and a summary', () => {
    for (const code of CODES) {
      const { status, summary } = ERROR_CATALOG[code];
      assert.match(code, /^[a-z]+(_[a-z]+)*$/, code);
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
      assert.ok(HTTP_REASONS[status], `${code}: ${status} is not a standard HTTP status`);
      assert.ok(summary.length > 0, code);
    }
  });

  test('stable codes are never removed or renamed', () => {
    for (const code of STABLE_CODES) assert.ok(code in ERROR_CATALOG, `code "${code}" disappeared from the catalog`);
  });

  test('the middleware maps every code to its catalog status, keeping code, message and details', () => {
    for (const code of CODES) {
      const details = [{ path: 'a.b', message: 'bad' }];
      const mapped = toHttpError(new NeuralCleaveError(code, `message of ${code}`, details));
      assert.equal(mapped.status, ERROR_CATALOG[code].status, code);
      assert.deepEqual(mapped.body, { error: { code, message: `message of ${code}`, details } });
    }
  });

  test('every exported error class carries a catalog code, and its status is the catalog one', () => {
    const classes = exportedErrorClasses();
    assert.ok(classes.length >= 6, `found only ${classes.map((c) => c.name).join(', ')}`);
    for (const { name, make } of classes) {
      const err = make();
      assert.ok(err.code in ERROR_CATALOG, `${name}: ${err.code}`);
      assert.equal(err.status, ERROR_CATALOG[err.code].status, name);
      assert.equal(toHttpError(err).status, err.status, name);
      assert.equal(err.name, name, `${name} should set its name`);
    }
  });

  test('the body-parser and status tables agree with the catalog', () => {
    for (const [type, m] of Object.entries(BODY_PARSER_ERRORS)) {
      assert.equal(ERROR_CATALOG[m.code].status, m.status, type);
      const err = Object.assign(createHttpError(m.status, 'boom'), { type });
      const mapped = toHttpError(err);
      assert.equal(mapped.status, m.status, type);
      assert.equal(mapped.body.error.code, m.code, type);
    }
    for (const [status, code] of Object.entries(STATUS_CODES)) {
      assert.equal(ERROR_CATALOG[code!].status, Number(status), code);
      assert.equal(toHttpError(createHttpError(Number(status), 'boom')).body.error.code, code);
    }
  });

  test('the too-large message states the cap', () => {
    const err = Object.assign(createHttpError(413, 'request entity too large'), { type: 'entity.too.large' });
    assert.match(toHttpError(err, { maxBodyBytes: 1024 }).body.error.message, /1024 bytes/);
  });

  test('SQLite lock contention is a retryable 503, not a 500', () => {
    // the SQLite adapters map the driver's error (src/adapters/sqlite/errors.ts); the API answers the mapped one
    const mapped = toHttpError(sqliteError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })));
    assert.equal(mapped.status, 503);
    assert.equal(mapped.body.error.code, 'backend_unavailable');
    assert.equal(mapped.headers?.['Retry-After'], '1');
  });

  test('an unexpected error is a 500 that does not leak its message', () => {
    const mapped = toHttpError(new TypeError('secret internals at /srv/app.js'), { requestId: 'r-1' });
    assert.equal(mapped.status, 500);
    assert.equal(mapped.unexpected, true);
    assert.equal(mapped.body.error.code, 'internal');
    assert.doesNotMatch(mapped.body.error.message, /secret/);
    assert.match(mapped.body.error.message, /r-1/);
    // a 5xx http-error is not a client error either
    assert.equal(toHttpError(createHttpError(502, 'upstream')).body.error.code, 'internal');
  });
});
