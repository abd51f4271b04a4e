/**
 * Hash routes, so every view has a link that can be reloaded or shared (the server only ever serves
 * index.html at `/`):
 *   #/users                      users the key may see
 *   #/users/<user>               that user's sessions
 *   #/sessions/<user>/<session>  the memories of one session
 *   #/search?user=&q=&session=   substring search of long-term entries
 *   #/retrieve?user=&q=&session=&k=  what retrieval would hand the model, tier by tier
 *   #/status                     backends, queues, failed jobs
 */

export type ViewName = 'users' | 'sessions' | 'session' | 'search' | 'retrieve' | 'status';

export interface Route {
  view: ViewName;
  /** decoded path segments after the view name */
  parts: string[];
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = raw.split('?', 2);
  const segments = path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  const params = new URLSearchParams(query);
  const [head, ...parts] = segments;
  switch (head) {
    case 'users':
      return parts.length > 0 ? { view: 'sessions', parts, params } : { view: 'users', parts, params };
    case 'sessions':
      return { view: 'session', parts, params };
    case 'search':
    case 'retrieve':
    case 'status':
      return { view: head, parts, params };
    default:
      return { view: 'users', parts: [], params };
  }
}

export function href(segments: readonly string[], params: Record<string, string | number | undefined> = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') qs.set(k, String(v));
  const q = qs.toString();
  return `#/${segments.map((s) => encodeURIComponent(s)).join('/')}${q ? `?${q}` : ''}`;
}

/** which top-level tab a view belongs to */
export function tabOf(view: ViewName): string {
  return view === 'sessions' || view === 'session' ? 'users' : view;
}
