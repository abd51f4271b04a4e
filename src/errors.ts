/**
 * One catalog of stable error codes with their HTTP status. Every error a user can see carries one of
 * these codes; `test/unit/errors.test.ts` keeps the catalog and the classes in step.
 */
export const ERROR_CATALOG = {
  bad_request: { status: 400, summary: 'the request is malformed or a field is invalid' },
  config_invalid: { status: 500, summary: 'the configuration is invalid' },
  unauthorized: { status: 401, summary: 'a valid API key is required' },
  forbidden: { status: 403, summary: 'the API key may not touch this user' },
  not_found: { status: 404, summary: 'no such resource' },
  method_not_allowed: { status: 405, summary: 'the path exists but not with this method' },
  // not answered since ids became per user (no id of one user can collide with another's); kept so
  // that clients handling it keep compiling
  id_conflict: { status: 409, summary: 'the id is already used by another user (no longer answered: ids are per user)' },
  content_conflict: { status: 409, summary: 'the id is already stored with other content' },
  payload_too_large: { status: 413, summary: 'the request body is too large' },
  unsupported_media_type: { status: 415, summary: 'the request body must be JSON (Content-Type: application/json)' },
  llm_unavailable: { status: 503, summary: 'no LLM is configured or reachable' },
  backend_unavailable: { status: 503, summary: 'a storage backend is unavailable' },
  insufficient_storage: { status: 507, summary: "the durable store's disk is full" },
  internal: { status: 500, summary: 'an unexpected error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class NeuralCleaveError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], options?: ErrorOptions) {
    super(message, options);
    this.name = 'NeuralCleaveError';
    this.code = code;
    if (details) this.details = details;
  }
  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }
}

/** A value failed validation; `details` names each failing field. */
export class ValidationError extends NeuralCleaveError {
  constructor(message: string, details: ErrorDetail[]) {
    super('bad_request', message, details);
    this.name = 'ValidationError';
  }
}

/** The configuration file or environment is wrong; start-up stops with exit code 2. */
export class ConfigError extends NeuralCleaveError {
  constructor(message: string, details?: ErrorDetail[]) {
    super('config_invalid', message, details);
    this.name = 'ConfigError';
  }
}

export class NotFoundError extends NeuralCleaveError {
  constructor(what: string) {
    super('not_found', `${what} not found`);
    this.name = 'NotFoundError';
  }
}

/** No API key, or an unknown one. */
export class UnauthorizedError extends NeuralCleaveError {
  constructor(message = 'a valid API key is required: send Authorization: Bearer <key>') {
    super('unauthorized', message);
    this.name = 'UnauthorizedError';
  }
}

/** The API key is valid but not bound to the user the request names. */
export class ForbiddenError extends NeuralCleaveError {
  /** `holder`: what grants access, as the caller knows it ("this API key", "this MCP server (--user dora)") */
  constructor(userId: string, holder = 'this API key') {
    super('forbidden', `${holder} may not touch the memories of user "${userId}"`);
    this.name = 'ForbiddenError';
  }
}

/**
 * A write gave an id the user already holds with other content (session, role, name or text). An
 * exact re-send is a duplicate, not this; a change goes through an edit, or under a new id.
 */
export class ContentConflictError extends NeuralCleaveError {
  constructor(
    readonly id: string,
    /** the turn's position in its batch, when known */
    readonly index?: number,
    path = index === undefined ? 'id' : `${index}.id`,
  ) {
    super('content_conflict', `memory "${id}" already exists with other content; nothing was written (re-send it unchanged, edit it, or use a new id)`, [
      { path, message: `"${id}" is already stored with other content` },
    ]);
    this.name = 'ContentConflictError';
  }
}

/**
 * A storage backend the request needs does not answer (the database is down, unreachable, or out of
 * connections): 503, retry later. Nothing was acknowledged, so nothing is lost.
 */
export class BackendUnavailableError extends NeuralCleaveError {
  constructor(
    readonly backend: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super('backend_unavailable', message, undefined, options);
    this.name = 'BackendUnavailableError';
  }
}

/**
 * The database is there but busy past its lock timeout (another process holding the write lock): 503
 * with a short Retry-After; nothing was acknowledged, and a retry in a moment usually succeeds.
 */
export class BackendBusyError extends BackendUnavailableError {
  /** what the HTTP answer's Retry-After says */
  readonly retryAfterSeconds = 1;
  constructor(backend: string, options?: ErrorOptions) {
    super(backend, 'the database is busy; retry shortly', options);
    this.name = 'BackendBusyError';
  }
}

/** less free space than this on the SQLite file's disk is a full disk: a write of a few pages and its WAL frames no longer fits */
export const DISK_FULL_BELOW_BYTES = 1024 * 1024;

/**
 * The disk holding the durable store is full (SQLITE_FULL): 507. The statement was rolled back, so
 * nothing of the request was written or acknowledged; every turn acknowledged before is kept. Writes
 * and deletes succeed again once space is freed.
 */
export class StorageFullError extends NeuralCleaveError {
  constructor(path: string, options?: ErrorOptions) {
    super(
      'insufficient_storage',
      `the disk holding ${path} is full: nothing was written; free space on it (or move sqlite_path to a larger disk) and retry`,
      undefined,
      options,
    );
    this.name = 'StorageFullError';
  }
}

/** An erasure could not remove everything (a backend down, a process that did not confirm); run it again. */
export class ErasureIncompleteError extends NeuralCleaveError {
  constructor(message: string, details?: ErrorDetail[]) {
    super('backend_unavailable', `the erasure is incomplete: ${message}; run it again`, details);
    this.name = 'ErasureIncompleteError';
  }
}

/**
 * The caller stopped waiting before the answer (an HTTP client closed its connection): the work done
 * for it stopped where it was, and nothing was answered. Nobody reads the code; it is the one a request
 * aborted before its body arrived gets (400), and the error is never logged as unexpected.
 */
export class RequestAbortedError extends NeuralCleaveError {
  constructor(message = 'the caller stopped waiting before the answer: the work for it stopped', options?: ErrorOptions) {
    super('bad_request', message, undefined, options);
    this.name = 'RequestAbortedError';
  }
}

/** Why no LLM answered: nothing configured, not reachable, too slow, an HTTP error, or an unusable answer. */
export type LlmFailure = 'not_configured' | 'unreachable' | 'timeout' | 'http_error' | 'bad_response';

/** No LLM is configured or reachable (503): `/chat` fails, compaction falls back to the extractive summarizer. */
export class LlmUnavailableError extends NeuralCleaveError {
  readonly reason: LlmFailure;
  /** the HTTP status the LLM endpoint answered, for `http_error` */
  readonly httpStatus?: number;
  constructor(message: string, reason: LlmFailure, options?: { httpStatus?: number; cause?: unknown }) {
    super('llm_unavailable', message, undefined, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LlmUnavailableError';
    this.reason = reason;
    if (options?.httpStatus !== undefined) this.httpStatus = options.httpStatus;
  }
}

/** Turns zod issues into `{path, message}` details with dotted paths ("turns.3.content"). */
export function zodDetails(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): ErrorDetail[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

export function describeDetails(details: ErrorDetail[]): string {
  return details.map((d) => `${d.path}: ${d.message}`).join('; ');
}
