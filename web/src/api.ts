/**
 * The page's one door to the server: same-origin fetches to the JSON API with the key the user typed
 * in. The key lives in sessionStorage only — gone when the tab closes, never in localStorage, a cookie
 * or a URL.
 */

const KEY_ITEM = 'neuralcleave.api_key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const keyStore = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (key: string): void => sessionStorage.setItem(KEY_ITEM, key),
  clear: (): void => sessionStorage.removeItem(KEY_ITEM),
};

type Query = Record<string, string | number | undefined | null>;

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function request<T>(method: string, path: string, body?: unknown, alsoOk: readonly number[] = []): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = keyStore.get();
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  // relative to the page, so the inspector works under any mount point
  const res = await fetch(path.replace(/^\//, './'), {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // a non-JSON answer (a proxy's error page): reported below by status
  }
  if (!res.ok && !alsoOk.includes(res.status)) {
    const err = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(res.status, err?.code ?? 'http_error', err?.message ?? `${res.status} ${res.statusText}`);
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body: unknown) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  delete: <T>(path: string) => request<T>('DELETE', path),
  /** /health answers its report with 503 when writes cannot be made durable: still a report */
  health: <T>() => request<T>('GET', '/health', undefined, [503]),
};

/** a path segment of an id or session the user did not choose the characters of */
export const seg = (s: string): string => encodeURIComponent(s);
