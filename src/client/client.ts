import { apiError, MemoryApiError, MemoryClientError, MemoryNetworkError, MemoryTimeoutError } from './errors.js';
import type {
  AddTurnsResult,
  ChatRequest,
  ChatResponse,
  DeleteResult,
  EntriesResponse,
  HealthReport,
  MemoryEntry,
  MemoryPatch,
  PruneRequest,
  PruneResult,
  RecentOptions,
  RetrieveRequest,
  RetrieveResponse,
  SearchOptions,
  TurnInput,
} from './types.js';

export interface MemoryClientOptions {
  /** where `neuralcleave serve` listens, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** sent as `Authorization: Bearer <apiKey>`; leave it out for a server with no api_keys */
  apiKey?: string;
  /** per attempt; default 10,000 ms */
  timeoutMs?: number;
  /** further attempts after a retryable failure; default 2 */
  retries?: number;
  /** the first backoff; it doubles each attempt (with jitter), up to 5 s; default 200 ms */
  retryDelayMs?: number;
  /** another fetch (tests, instrumented clients); default globalThis.fetch */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** cancels the call, retries included */
  signal?: AbortSignal;
}

/** By-id calls: ids are per user; name the user when the key is bound to several (default: its only one). */
export interface ByIdOptions extends CallOptions {
  user_id?: string;
}

/**
 * When a failed attempt may be repeated. Every call: a network failure before any answer and 503 (the
 * server did nothing, or a backend is briefly away). Turn writes: also timeouts and other 5xx, because
 * every turn carries an id (the client gives one to a turn that has none) and a resent id is stored
 * once. Chat writes two turns whose ids the server picks: only 503 (nothing was written) and a refused
 * connection (nothing was sent).
 */
type RetryPolicy = 'standard' | 'idempotent-write' | 'chat';

interface Req {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  retry: RetryPolicy;
  /** statuses that are answers, not errors (GET /health answers 503 with its report) */
  accept?: readonly number[];
}

const MAX_BACKOFF_MS = 5_000;
const MAX_RETRY_AFTER_MS = 30_000;

/** Node's fetch names the socket error in `cause.code`; a browser says only "Failed to fetch". */
const refusedConnection = (err: unknown): boolean => (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';

function newId(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * A typed client of the HTTP API, for any Node 20+ program and browser bundles: it uses only fetch,
 * AbortController and timers, and imports nothing of the server (its types come from the server's
 * schemas at compile time).
 */
export class MemoryClient {
  private readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: MemoryClientOptions) {
    let url: URL | null = null;
    try {
      url = new URL(options.baseUrl);
    } catch {
      // reported below
    }
    if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
      throw new MemoryClientError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 2;
    this.retryDelayMs = options.retryDelayMs ?? 200;
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Writes turns of one session (durable when this resolves). Turns without an `id` get one, so a retry stores them once. */
  addTurns(sessionId: string, turns: TurnInput | readonly TurnInput[], options?: CallOptions): Promise<AddTurnsResult> {
    const list = (Array.isArray(turns) ? turns : [turns]) as readonly TurnInput[];
    const body = { turns: list.map((t) => (t.id === undefined ? { ...t, id: newId() } : t)) };
    return this.request({ method: 'POST', path: `/sessions/${encodeURIComponent(sessionId)}/turns`, body, retry: 'idempotent-write' }, options);
  }

  /** The three-tier retrieval pass: ranked results with `explain`, and prompt blocks. */
  retrieve(request: RetrieveRequest, options?: CallOptions): Promise<RetrieveResponse> {
    return this.request({ method: 'POST', path: '/memory/retrieve', body: request, retry: 'standard' }, options);
  }

  /** Long-term entries whose text or speaker name contains `q` (literally), newest first. */
  async search(q: string, query: SearchOptions = {}, options?: CallOptions): Promise<MemoryEntry[]> {
    const r = await this.request<EntriesResponse>({ method: 'GET', path: '/memory/search', query: { q, ...query }, retry: 'standard' }, options);
    return r.entries;
  }

  /** The most recent long-term entries. */
  async recent(query: RecentOptions = {}, options?: CallOptions): Promise<MemoryEntry[]> {
    const r = await this.request<EntriesResponse>({ method: 'GET', path: '/memory/recent', query: { ...query }, retry: 'standard' }, options);
    return r.entries;
  }

  get(id: string, options?: ByIdOptions): Promise<MemoryEntry> {
    return this.request({ method: 'GET', path: `/memory/${encodeURIComponent(id)}`, query: { user_id: options?.user_id }, retry: 'standard' }, options);
  }

  /** Edits content (re-embedded), importance and/or pinned. */
  update(id: string, patch: MemoryPatch, options?: ByIdOptions): Promise<MemoryEntry> {
    return this.request({ method: 'PATCH', path: `/memory/${encodeURIComponent(id)}`, query: { user_id: options?.user_id }, body: patch, retry: 'standard' }, options);
  }

  /** Deletes a memory from every tier. */
  delete(id: string, options?: ByIdOptions): Promise<DeleteResult> {
    return this.request({ method: 'DELETE', path: `/memory/${encodeURIComponent(id)}`, query: { user_id: options?.user_id }, retry: 'standard' }, options);
  }

  /** Deletes one user's unpinned long-term entries by age, importance and/or session. */
  prune(criteria: PruneRequest, options?: CallOptions): Promise<PruneResult> {
    return this.request({ method: 'POST', path: '/memory/prune', body: criteria, retry: 'standard' }, options);
  }

  /** One chat turn with memory (needs an LLM on the server; else LlmUnavailableError). */
  chat(request: ChatRequest, options?: CallOptions): Promise<ChatResponse> {
    return this.request({ method: 'POST', path: '/chat', body: request, retry: 'chat' }, options);
  }

  /** Each tier's backend and state; a server that cannot make writes durable answers `status: "down"`. */
  health(options?: CallOptions): Promise<HealthReport> {
    return this.request({ method: 'GET', path: '/health', retry: 'standard', accept: [503] }, options);
  }

  private url(path: string, query: Req['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private async request<T>(req: Req, options: CallOptions = {}): Promise<T> {
    const what = `${req.method} ${req.path}`;
    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      let failure: MemoryClientError;
      try {
        return await this.attempt<T>(req, what, options.signal);
      } catch (err) {
        if (!(err instanceof MemoryClientError)) throw err; // the caller's abort
        failure = err;
      }
      if (attempt >= this.retries || !retryable(req.retry, failure)) throw failure;
      const backoff = Math.min(MAX_BACKOFF_MS, this.retryDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      await sleep((failure instanceof MemoryApiError ? failure.retryAfterMs : undefined) ?? backoff, options.signal);
    }
  }

  private async attempt<T>(req: Req, what: string, signal: AbortSignal | undefined): Promise<T> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.timeoutMs);
    const onAbort = () => timeout.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey !== undefined) headers.authorization = `Bearer ${this.apiKey}`;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    try {
      let res: Response;
      try {
        res = await this.fetchFn(this.url(req.path, req.query), {
          method: req.method,
          headers,
          signal: timeout.signal,
          ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
        });
      } catch (err) {
        throw this.transportError(err, what, signal);
      }
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw this.transportError(err, what, signal);
      }
      const body = parseJson(text);
      if (res.ok || req.accept?.includes(res.status)) {
        if (body === undefined) throw new MemoryClientError(`${what}: the answer is not JSON (HTTP ${res.status})`);
        return body as T;
      }
      const requestId = res.headers.get('x-request-id');
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      throw apiError(res.status, body, {
        ...(requestId ? { requestId } : {}),
        ...(retryAfter > 0 ? { retryAfterMs: Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) } : {}),
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private transportError(err: unknown, what: string, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason; // the caller cancelled: not ours to wrap
    if ((err as { name?: string }).name === 'AbortError') return new MemoryTimeoutError(this.timeoutMs, what);
    return new MemoryNetworkError(`${what}: ${(err as Error).message ?? String(err)}`, { cause: err, refused: refusedConnection(err) });
  }
}

function retryable(policy: RetryPolicy, err: MemoryClientError): boolean {
  if (err instanceof MemoryApiError) return err.status === 503 || (policy === 'idempotent-write' && err.status >= 500);
  if (err instanceof MemoryTimeoutError) return policy === 'idempotent-write';
  if (err instanceof MemoryNetworkError) return policy !== 'chat' || err.refused;
  return false;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}
