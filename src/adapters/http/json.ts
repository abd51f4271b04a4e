import { LlmUnavailableError, type LlmFailure } from '../../errors.js';
import type { FetchFn } from '../../ports/llm.js';

/** What a failed request is made into: the caller's typed error (an LLM's, an embedding server's). */
export type RequestFailure = (
  message: string,
  reason: LlmFailure,
  options: { httpStatus?: number; retryAfterMs?: number; cause?: unknown },
) => Error;

export interface RequestOptions {
  /** what the endpoint is, for messages ("ollama", "openai embeddings") */
  provider: string;
  fetch: FetchFn;
  timeoutMs: number;
  /** the setting that sets timeoutMs, named in the timeout's message (default llm_timeout_ms) */
  timeoutSetting?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** how the endpoint words its errors in a JSON body */
  errorMessage: (body: unknown) => string | undefined;
  /** default: an LlmUnavailableError */
  fail?: RequestFailure;
}

/** the longest piece of an error body quoted in a message */
const MAX_QUOTED = 300;

const llmFailure: RequestFailure = (message, reason, o) =>
  new LlmUnavailableError(message, reason, { ...(o.httpStatus !== undefined ? { httpStatus: o.httpStatus } : {}), ...(o.cause !== undefined ? { cause: o.cause } : {}) });

/**
 * One JSON request to a model server, under a timeout that covers reading the body too. Every
 * failure becomes the caller's error naming the endpoint and what went wrong (with the server's
 * Retry-After, when it sent one); the request's headers (which may hold an API key) are never part
 * of a message.
 */
export async function requestJson(url: string, init: { method: 'GET' | 'POST'; body?: unknown }, o: RequestOptions): Promise<unknown> {
  const fail = o.fail ?? llmFailure;
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const where = `${o.provider} at ${new URL(url).origin}`;
  let text: string;
  let status: number;
  let retryAfter: string | null = null;
  try {
    const res = await o.fetch(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal,
    });
    status = res.status;
    retryAfter = res.headers.get('retry-after');
    text = await res.text();
  } catch (err) {
    if (timeout.aborted) {
      throw fail(`${where} did not answer within ${o.timeoutMs} ms (${o.timeoutSetting ?? 'llm_timeout_ms'})`, 'timeout', { cause: err });
    }
    if (o.signal?.aborted) throw fail(`the call to ${where} was cancelled`, 'unreachable', { cause: err });
    throw fail(`${where} is not reachable: ${networkReason(err)}`, 'unreachable', { cause: err });
  }

  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status < 200 || status >= 300) {
    const said = o.errorMessage(body) ?? text.slice(0, MAX_QUOTED);
    const retryAfterMs = retryAfterMsOf(retryAfter);
    throw fail(`${where} answered HTTP ${status}${said ? `: ${said}` : ''}`, 'http_error', { httpStatus: status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  }
  if (body === undefined) {
    throw fail(`${where} answered something that is not JSON: ${JSON.stringify(text.slice(0, MAX_QUOTED))}`, 'bad_response', {});
  }
  return body;
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
function retryAfterMsOf(v: string | null): number | undefined {
  if (v === null || v.trim() === '') return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** undici hides the socket error in `cause`: surface "connect ECONNREFUSED 127.0.0.1:11434" and the like. */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { message?: string; code?: string } }).cause;
  return cause?.message ?? cause?.code ?? (err instanceof Error ? err.message : String(err));
}

/** Joins a base URL and an API path without doubling or dropping slashes. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** `https://api.openai.com`, `…/v1` and `…/v1/` all name the same OpenAI-compatible API root, `…/v1`. */
export function openAiApiRoot(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/** true when the URL's host is this machine (127.0.0.0/8, localhost, [::1]): what privacy mode accepts */
export function isLoopbackUrl(url: string): boolean {
  return LOOPBACK_HOST.test(new URL(url).hostname);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
