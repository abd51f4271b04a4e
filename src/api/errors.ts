import type { NextFunction, Request, Response } from 'express';
import { BackendBusyError, ERROR_CATALOG, NeuralCleaveError, RequestAbortedError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { CLIENT_LEFT } from './client-gone.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
  /** an unexpected error: logged in full, answered without its message */
  unexpected: boolean;
}

/**
 * Errors raised by Express's body parser, by their `type`, with the catalog code they become and the
 * status answered (test/unit/errors.test.ts checks it agrees with the catalog).
 */
export const BODY_PARSER_ERRORS: Readonly<Record<string, { code: ErrorCode; status: number; message: (e: Error) => string }>> = {
  'entity.parse.failed': { code: 'bad_request', status: 400, message: (e) => `malformed JSON body: ${e.message}` },
  'entity.too.large': { code: 'payload_too_large', status: 413, message: () => 'request body too large' },
  // raised by our depth check (src/api/json-depth.ts); body-parser reports any verify failure as 403, but
  // this is malformed input
  'entity.too.deep': { code: 'bad_request', status: 400, message: (e) => `malformed JSON body: ${e.message}` },
  // raised by our UTF-8 check (src/api/body-encoding.ts), reported by body-parser as 403 like the depth check
  'entity.not.utf8': { code: 'bad_request', status: 400, message: (e) => `malformed JSON body: ${e.message}` },
  'request.size.invalid': { code: 'bad_request', status: 400, message: () => 'the request body is shorter or longer than its Content-Length' },
  'request.aborted': { code: 'bad_request', status: 400, message: () => 'the request was aborted before its body arrived' },
  'encoding.unsupported': { code: 'unsupported_media_type', status: 415, message: (e) => e.message },
  'charset.unsupported': { code: 'unsupported_media_type', status: 415, message: (e) => `${e.message}; send UTF-8 JSON` },
};

/** Other client errors that carry an HTTP status (http-errors, e.g. an undecodable path parameter). */
export const STATUS_CODES: Readonly<Partial<Record<number, ErrorCode>>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

function body(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  return { error: details && details.length > 0 ? { code, message, details } : { code, message } };
}

/** The one mapping from anything thrown to the `{error: {code, message, details?}}` answer. */
export function toHttpError(err: unknown, context: { maxBodyBytes?: number; requestId?: string } = {}): HttpError {
  if (err instanceof NeuralCleaveError) {
    // a busy database (the stores' adapters raise it) is transient: the client is told when to retry
    const headers = err instanceof BackendBusyError ? { headers: { 'Retry-After': String(err.retryAfterSeconds) } } : {};
    return { status: ERROR_CATALOG[err.code].status, body: body(err.code, err.message, err.details), unexpected: err.code === 'internal', ...headers };
  }
  const e = err as Partial<Error> & { type?: string; status?: number; statusCode?: number; code?: string; expose?: boolean };
  if (typeof e.type === 'string' && Object.hasOwn(BODY_PARSER_ERRORS, e.type)) {
    const m = BODY_PARSER_ERRORS[e.type]!;
    let message = m.message(err as Error);
    if (m.code === 'payload_too_large' && context.maxBodyBytes !== undefined) message += `: at most ${context.maxBodyBytes} bytes`;
    return { status: ERROR_CATALOG[m.code].status, body: body(m.code, message), unexpected: false };
  }
  const status = e.status ?? e.statusCode;
  const code = status !== undefined ? STATUS_CODES[status] : undefined;
  if (code && e.expose !== false) {
    return { status: ERROR_CATALOG[code].status, body: body(code, e.message || ERROR_CATALOG[code].summary), unexpected: false };
  }
  const ref = context.requestId ? ` (request ${context.requestId})` : '';
  return { status: ERROR_CATALOG.internal.status, body: body('internal', `an unexpected error; see the server log${ref}`), unexpected: true };
}

/** The app's one error middleware. Unexpected errors are logged whole and answered without detail. */
export function errorMiddleware(maxBodyBytes: number) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    // the client left and the work stopped: nothing to answer, and no error (pino-http wrote "request aborted")
    if (err instanceof RequestAbortedError && res.destroyed) {
      req.log?.debug(CLIENT_LEFT.fields, CLIENT_LEFT.message);
      return;
    }
    if (res.headersSent) {
      next(err);
      return;
    }
    const mapped = toHttpError(err, { maxBodyBytes, requestId: String(req.id ?? '') || undefined });
    if (mapped.unexpected) req.log?.error({ err }, 'unexpected error');
    // the pino-http "request completed" line reports the error code, not the stack
    res.locals.errorCode = mapped.body.error.code;
    for (const [k, v] of Object.entries(mapped.headers ?? {})) res.setHeader(k, v);
    res.status(mapped.status).json(mapped.body);
  };
}

/** Final handler for a path no router knows. */
export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new NeuralCleaveError('not_found', `no route ${req.method} ${req.path}`));
}

/** Answers 405 with `Allow` for a known path asked with another method. */
export function methodNotAllowed(...allowed: string[]) {
  const allow = allowed.join(', ');
  return (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Allow', allow);
    next(new NeuralCleaveError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}`));
  };
}
