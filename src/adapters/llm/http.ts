import { LlmUnavailableError } from '../../errors.js';
import type { FetchFn, LlmProviderName } from '../../ports/llm.js';

export interface RequestOptions {
  provider: LlmProviderName;
  fetch: FetchFn;
  timeoutMs: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** how the endpoint words its errors in a JSON body */
  errorMessage: (body: unknown) => string | undefined;
}

/** the longest piece of an error body quoted in a message */
const MAX_QUOTED = 300;

/**
 * One JSON request to an LLM endpoint, under a timeout that covers reading the body too. Every
 * failure becomes an LlmUnavailableError naming the endpoint and what went wrong; the request's
 * headers (which may hold an API key) are never part of a message.
 */
export async function requestJson(url: string, init: { method: 'GET' | 'POST'; body?: unknown }, o: RequestOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const where = `${o.provider} at ${new URL(url).origin}`;
  let text: string;
  let status: number;
  try {
    const res = await o.fetch(url, {
      method: init.method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal,
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (timeout.aborted) {
      throw new LlmUnavailableError(`${where} did not answer within ${o.timeoutMs} ms (llm_timeout_ms)`, 'timeout', { cause: err });
    }
    if (o.signal?.aborted) throw new LlmUnavailableError(`the call to ${where} was cancelled`, 'unreachable', { cause: err });
    throw new LlmUnavailableError(`${where} is not reachable: ${networkReason(err)}`, 'unreachable', { cause: err });
  }

  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status < 200 || status >= 300) {
    const said = o.errorMessage(body) ?? text.slice(0, MAX_QUOTED);
    throw new LlmUnavailableError(`${where} answered HTTP ${status}${said ? `: ${said}` : ''}`, 'http_error', { httpStatus: status });
  }
  if (body === undefined) {
    throw new LlmUnavailableError(`${where} answered something that is not JSON: ${JSON.stringify(text.slice(0, MAX_QUOTED))}`, 'bad_response');
  }
  return body;
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

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
