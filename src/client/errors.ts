import type { ErrorCode, ErrorDetail } from '../errors.js';

export type { ErrorCode, ErrorDetail };

/** Everything a MemoryClient throws. */
export class MemoryClientError extends Error {
  override name = 'MemoryClientError';
}

export interface ApiErrorInit<C extends ErrorCode> {
  code: C;
  status: number;
  message: string;
  details?: ErrorDetail[];
  /** the server's X-Request-Id, to find the request in its log */
  requestId?: string;
  /** how long the server asked to wait before a retry (Retry-After) */
  retryAfterMs?: number;
}

/**
 * The server answered with an error of the catalog (src/errors.ts): `code` is its stable code, and
 * each code has its own class below, so `catch (e) { if (e instanceof NotFoundError) … }` or
 * `switch (e.code)` both narrow.
 */
export class MemoryApiError<C extends ErrorCode = ErrorCode> extends MemoryClientError {
  override name = 'MemoryApiError';
  readonly code: C;
  readonly status: number;
  readonly details: ErrorDetail[];
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(init: ApiErrorInit<C>) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export class BadRequestError extends MemoryApiError<'bad_request'> {
  override name = 'BadRequestError';
}
export class ConfigInvalidError extends MemoryApiError<'config_invalid'> {
  override name = 'ConfigInvalidError';
}
export class UnauthorizedError extends MemoryApiError<'unauthorized'> {
  override name = 'UnauthorizedError';
}
export class ForbiddenError extends MemoryApiError<'forbidden'> {
  override name = 'ForbiddenError';
}
export class NotFoundError extends MemoryApiError<'not_found'> {
  override name = 'NotFoundError';
}
export class MethodNotAllowedError extends MemoryApiError<'method_not_allowed'> {
  override name = 'MethodNotAllowedError';
}
export class IdConflictError extends MemoryApiError<'id_conflict'> {
  override name = 'IdConflictError';
}
export class ContentConflictError extends MemoryApiError<'content_conflict'> {
  override name = 'ContentConflictError';
}
export class PayloadTooLargeError extends MemoryApiError<'payload_too_large'> {
  override name = 'PayloadTooLargeError';
}
export class UnsupportedMediaTypeError extends MemoryApiError<'unsupported_media_type'> {
  override name = 'UnsupportedMediaTypeError';
}
export class LlmUnavailableError extends MemoryApiError<'llm_unavailable'> {
  override name = 'LlmUnavailableError';
}
export class BackendUnavailableError extends MemoryApiError<'backend_unavailable'> {
  override name = 'BackendUnavailableError';
}
export class InsufficientStorageError extends MemoryApiError<'insufficient_storage'> {
  override name = 'InsufficientStorageError';
}
export class InternalError extends MemoryApiError<'internal'> {
  override name = 'InternalError';
}

/** one class per catalog code: a code added to the catalog fails to compile here until it has one */
const BY_CODE: { [C in ErrorCode]: new (init: ApiErrorInit<C>) => MemoryApiError<C> } = {
  bad_request: BadRequestError,
  config_invalid: ConfigInvalidError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  id_conflict: IdConflictError,
  content_conflict: ContentConflictError,
  payload_too_large: PayloadTooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  llm_unavailable: LlmUnavailableError,
  backend_unavailable: BackendUnavailableError,
  insufficient_storage: InsufficientStorageError,
  internal: InternalError,
};

/** the code of a status when the body carries none (a proxy's answer, say) */
const BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'id_conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  503: 'backend_unavailable',
  507: 'insufficient_storage',
};

const isCode = (c: unknown): c is ErrorCode => typeof c === 'string' && Object.hasOwn(BY_CODE, c);

/** The typed error of an HTTP error answer: `{error: {code, message, details?}}`, or only its status. */
export function apiError(status: number, body: unknown, extra: Pick<ApiErrorInit<ErrorCode>, 'requestId' | 'retryAfterMs'> = {}): MemoryApiError {
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code = isCode(e?.code) ? e.code : (BY_STATUS[status] ?? 'internal');
  const message = typeof e?.message === 'string' ? e.message : `HTTP ${status}`;
  const Ctor = BY_CODE[code] as new (i: ApiErrorInit<ErrorCode>) => MemoryApiError;
  return new Ctor({ code, status, message, ...(Array.isArray(e?.details) ? { details: e.details as ErrorDetail[] } : {}), ...extra });
}

/** The request never got an answer: no connection, reset, DNS failure. */
export class MemoryNetworkError extends MemoryClientError {
  override name = 'MemoryNetworkError';
  /** the connection was refused: the request was never sent */
  readonly refused: boolean;
  constructor(message: string, options: { cause: unknown; refused: boolean }) {
    super(message, { cause: options.cause });
    this.refused = options.refused;
  }
}

/** No answer within `timeoutMs` (per attempt). */
export class MemoryTimeoutError extends MemoryClientError {
  override name = 'MemoryTimeoutError';
  constructor(readonly timeoutMs: number, what: string) {
    super(`${what}: no answer within ${timeoutMs} ms`);
  }
}
