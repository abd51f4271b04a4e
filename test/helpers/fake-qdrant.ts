import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A FAKE Qdrant: an HTTP server (node:http, loopback, free port) implementing only the subset of
 * Qdrant's REST API that `@qdrant/js-client-rest` sends for our adapter — no Qdrant server can be
 * installed on these machines. Paths, bodies and answers follow Qdrant's OpenAPI schema
 * (`{result, status: "ok", time}`, errors `{status: {error}}`); anything outside the subset answers
 * 501, so an adapter change that needs more fails loudly here instead of passing against a lenient fake.
 *
 * Implemented: GET / · GET /collections · GET|PUT|DELETE /collections/{c} · GET /collections/{c}/exists ·
 * PUT /collections/{c}/index · PUT /collections/{c}/points (upsert) · POST /collections/{c}/points
 * (retrieve) · POST …/points/delete (ids or filter) · POST …/points/query · POST …/points/search ·
 * POST …/points/count. Filters: `must` / `should` / `must_not` of `{key, match: {value | any}}`,
 * `{key, range: {gt | gte | lt | lte}}` (numbers, or RFC 3339 strings: Qdrant's datetime range) and
 * nested filters; a key `a.b` reads the nested payload field, as Qdrant does.
 * Distances: Cosine (vectors normalized on write, score = dot product, as Qdrant does) and Dot.
 */
export interface FakeQdrant {
  url: string;
  port: number;
  /** every request seen, in order: `PUT /collections/x/points` */
  readonly requests: string[];
  /** collections and their points, to check what the adapter wrote */
  collections(): Map<string, FakeCollection>;
  /** from now on, accept requests but never answer them (a hung server); `resume()` undoes it */
  hang(): void;
  resume(): void;
  /** closes the server and every connection (held requests are dropped) */
  stop(): Promise<void>;
}

export interface FakePoint {
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

export interface FakeCollection {
  size: number;
  distance: 'Cosine' | 'Dot';
  payloadIndexes: Map<string, string>;
  points: Map<string, FakePoint>;
}

export interface FakeQdrantOptions {
  /** when set, every route but `GET /` needs the `api-key` header (as in Qdrant) */
  apiKey?: string;
  version?: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Range = { gt?: unknown; gte?: unknown; lt?: unknown; lte?: unknown };
type Condition = { key?: string; match?: { value?: unknown; any?: unknown[] }; range?: Range } | NonNullable<Filter>;
type Filter = { must?: Condition[]; should?: Condition[]; must_not?: Condition[] } | null | undefined;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function startFakeQdrant(options: FakeQdrantOptions = {}): Promise<FakeQdrant> {
  const collections = new Map<string, FakeCollection>();
  const requests: string[] = [];
  let hung = false;
  let operation = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push(`${req.method} ${url.pathname}`);
      if (hung) return; // never answered: the client's timeout or the caller's budget must cope
      const started = performance.now();
      try {
        const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
        if (options.apiKey && url.pathname !== '/' && req.headers['api-key'] !== options.apiKey) throw new HttpError(401, 'Must provide an API key or an Authorization bearer token');
        // the root answers {title, version, commit} bare; every other route wraps its result
        if (url.pathname === '/' && req.method === 'GET') return send(res, 200, ROOT);
        const result = route(req, url.pathname, body);
        send(res, 200, { result, status: 'ok', time: (performance.now() - started) / 1000 });
      } catch (err) {
        const status = err instanceof HttpError ? err.status : err instanceof SyntaxError ? 400 : 500;
        send(res, status, { status: { error: (err as Error).message }, time: 0 });
      }
    });
  });

  function route(req: IncomingMessage, path: string, body: Record<string, unknown>): unknown {
    const m = req.method ?? 'GET';
    if (path === '/collections' && m === 'GET') return { collections: [...collections.keys()].map((name) => ({ name })) };
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== 'collections' || parts.length < 2) throw new HttpError(501, `fake Qdrant does not implement ${m} ${path}`);
    const name = parts[1]!;
    const rest = parts.slice(2).join('/');
    const op = `${m} ${rest}`;

    if (op === 'PUT ') return createCollection(name, body);
    if (op === 'GET exists') return { exists: collections.has(name) };
    const c = collections.get(name);
    if (!c && ['GET ', 'DELETE ', 'PUT index', 'PUT points', 'POST points', 'POST points/delete', 'POST points/query', 'POST points/search', 'POST points/count'].includes(op)) {
      throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    }
    switch (op) {
      case 'GET ':
        return info(c!);
      case 'DELETE ':
        collections.delete(name);
        return true;
      case 'PUT index': {
        const field = body.field_name;
        if (typeof field !== 'string') throw new HttpError(400, 'Format error in JSON body: missing field `field_name`');
        c!.payloadIndexes.set(field, String(body.field_schema));
        return updated();
      }
      case 'PUT points':
        return upsert(c!, body);
      case 'POST points':
        return retrieve(c!, body);
      case 'POST points/delete':
        return deletePoints(c!, body);
      case 'POST points/query':
        return { points: nearest(c!, body.query, body) };
      case 'POST points/search':
        return nearest(c!, body.vector, body);
      case 'POST points/count':
        return { count: [...c!.points.values()].filter((p) => matches(p, body.filter as Filter)).length };
      default:
        throw new HttpError(501, `fake Qdrant does not implement ${m} ${path}`);
    }
  }

  function createCollection(name: string, body: Record<string, unknown>): boolean {
    if (collections.has(name)) throw new HttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
    if (!/^[^/\\]{1,255}$/.test(name)) throw new HttpError(422, `Validation error in path parameters: [name: collection name contains forbidden characters]`);
    const vectors = body.vectors as { size?: unknown; distance?: unknown } | undefined;
    if (!vectors || !Number.isInteger(vectors.size) || (vectors.size as number) < 1) throw new HttpError(400, 'Format error in JSON body: vectors.size must be a positive integer');
    if (vectors.distance !== 'Cosine' && vectors.distance !== 'Dot') throw new HttpError(501, `fake Qdrant implements Cosine and Dot distances, not ${String(vectors.distance)}`);
    collections.set(name, { size: vectors.size as number, distance: vectors.distance, payloadIndexes: new Map(), points: new Map() });
    return true;
  }

  function upsert(c: FakeCollection, body: Record<string, unknown>): unknown {
    const points = body.points;
    if (!Array.isArray(points)) throw new HttpError(501, 'fake Qdrant implements upsert of a `points` list only (not the batch form)');
    const parsed = points.map((p: { id?: unknown; vector?: unknown; payload?: unknown }) => {
      const key = pointKey(p.id);
      if (!Array.isArray(p.vector) || !p.vector.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new HttpError(400, 'Format error in JSON body: vector must be a list of numbers');
      if (p.vector.length !== c.size) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${c.size}, got ${p.vector.length}`);
      const vector = c.distance === 'Cosine' ? normalized(p.vector as number[]) : (p.vector as number[]);
      return { key, point: { id: p.id as string | number, vector, payload: (p.payload ?? {}) as Record<string, unknown> } };
    });
    for (const { key, point } of parsed) c.points.set(key, point); // all or nothing, like one Qdrant operation
    return updated();
  }

  function retrieve(c: FakeCollection, body: Record<string, unknown>): unknown {
    if (!Array.isArray(body.ids)) throw new HttpError(400, 'Format error in JSON body: missing field `ids`');
    const out = [];
    for (const id of body.ids) {
      const p = c.points.get(pointKey(id));
      if (p) out.push(shape(p, body.with_payload ?? true, body.with_vector ?? false));
    }
    return out;
  }

  function deletePoints(c: FakeCollection, body: Record<string, unknown>): unknown {
    if (Array.isArray(body.points)) {
      const keys = body.points.map(pointKey);
      for (const k of keys) c.points.delete(k);
    } else if (body.filter !== undefined && body.filter !== null) {
      for (const [k, p] of c.points) if (matches(p, body.filter as Filter)) c.points.delete(k);
    } else {
      throw new HttpError(400, 'Format error in JSON body: expected `points` or `filter`');
    }
    return updated();
  }

  function nearest(c: FakeCollection, query: unknown, body: Record<string, unknown>): unknown[] {
    if (!Array.isArray(query) || !query.every((x) => typeof x === 'number')) throw new HttpError(501, 'fake Qdrant implements nearest-vector queries only (`query` as a list of numbers)');
    if (query.length !== c.size) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${c.size}, got ${query.length}`);
    const q = c.distance === 'Cosine' ? normalized(query as number[]) : (query as number[]);
    const limit = typeof body.limit === 'number' ? body.limit : 10;
    const threshold = typeof body.score_threshold === 'number' ? body.score_threshold : -Infinity;
    return [...c.points.values()]
      .filter((p) => matches(p, body.filter as Filter))
      .map((p) => ({ p, score: dot(p.vector, q) }))
      .filter((s) => s.score >= threshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ p, score }) => ({ ...shape(p, body.with_payload ?? false, body.with_vector ?? false), version: 1, score }));
  }

  function updated() {
    return { operation_id: ++operation, status: 'completed' };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    collections: () => collections,
    hang: () => {
      hung = true;
    },
    resume: () => {
      hung = false;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const ROOT = { title: 'qdrant - vector search engine (fake, for tests)', version: '1.18.0', commit: 'fake' };

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function info(c: FakeCollection): unknown {
  return {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: c.points.size,
    segments_count: 1,
    config: { params: { vectors: { size: c.size, distance: c.distance } } },
    payload_schema: Object.fromEntries([...c.payloadIndexes].map(([k, t]) => [k, { data_type: t, points: c.points.size }])),
  };
}

/** Qdrant accepts unsigned integers and UUIDs (in any case; stored canonical) as point ids. */
function pointKey(id: unknown): string {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return String(id);
  if (typeof id === 'string' && UUID.test(id)) return id.toLowerCase();
  throw new HttpError(400, `Format error in JSON body: value ${JSON.stringify(id)} is not a valid point ID, valid values are either an unsigned integer or a UUID`);
}

function shape(p: FakePoint, withPayload: unknown, withVector: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { id: p.id };
  if (withPayload === true) out.payload = p.payload;
  else if (Array.isArray(withPayload)) out.payload = Object.fromEntries(withPayload.filter((k: string) => k in p.payload).map((k: string) => [k, p.payload[k]]));
  else if (withPayload !== false && withPayload !== undefined && withPayload !== null) throw new HttpError(501, 'fake Qdrant implements with_payload as true, false or a list of keys');
  if (withVector === true) out.vector = p.vector;
  return out;
}

function matches(p: FakePoint, filter: Filter): boolean {
  if (!filter) return true;
  const test = (c: Condition): boolean => {
    if (!('key' in c)) return matches(p, c as Filter);
    if (typeof c.key !== 'string' || (!c.match && !c.range)) throw new HttpError(501, `fake Qdrant implements {key, match}, {key, range} and nested filters only, got ${JSON.stringify(c)}`);
    const v = c.key.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), p.payload);
    if (c.range) return inRange(v, c.range);
    if ('value' in c.match!) return v === c.match!.value;
    if (Array.isArray(c.match!.any)) return c.match!.any.includes(v);
    throw new HttpError(501, `fake Qdrant implements match.value and match.any only, got ${JSON.stringify(c.match)}`);
  };
  if (filter.must && !filter.must.every(test)) return false;
  if (filter.should && filter.should.length > 0 && !filter.should.some(test)) return false;
  if (filter.must_not && filter.must_not.some(test)) return false;
  return true;
}

/** numeric bounds compare numbers; string bounds are datetimes (Qdrant's DatetimeRange) */
function inRange(v: unknown, r: Range): boolean {
  const bounds = [r.gt, r.gte, r.lt, r.lte].filter((b) => b !== undefined);
  const asDate = bounds.some((b) => typeof b === 'string');
  const num = (x: unknown): number => {
    if (asDate) {
      if (typeof x !== 'string') return Number.NaN;
      return Date.parse(x);
    }
    return typeof x === 'number' ? x : Number.NaN;
  };
  const x = num(v);
  if (Number.isNaN(x)) return false;
  if (r.gt !== undefined && !(x > num(r.gt))) return false;
  if (r.gte !== undefined && !(x >= num(r.gte))) return false;
  if (r.lt !== undefined && !(x < num(r.lt))) return false;
  if (r.lte !== undefined && !(x <= num(r.lte))) return false;
  return true;
}

function normalized(v: number[]): number[] {
  const n = Math.hypot(...v);
  return n > 0 ? v.map((x) => x / n) : v;
}

function dot(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
