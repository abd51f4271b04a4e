import { QdrantClient } from '@qdrant/js-client-rest';
import type { Logger } from '../../logger.js';
import { acceptedValues, type MetadataScalar, type RecordFilter } from '../../domain/filters.js';
import type { EmbedderTag, VectorFilter, VectorHit, VectorIndex, VectorPayload, VectorPoint, VectorSearchFilter } from '../../ports/vector-index.js';
import { collectionName, isOurs, PREFIX_PATTERN } from './collections.js';
import { pointId } from './point-id.js';
import { lastParts } from '../vector-parts.js';

export interface QdrantIndexOptions {
  /** e.g. http://127.0.0.1:6333 */
  url: string;
  apiKey?: string | undefined;
  /** start of every collection name of this deployment (default `neuralcleave`) */
  prefix?: string;
  /** a write or admin request is aborted after this long (default 10 s) */
  timeoutMs?: number;
  /**
   * a search or ping is aborted after this long (default 1 s). Retrieval stops waiting at its own
   * budget anyway; this frees the connection of a request Qdrant never answers.
   */
  searchTimeoutMs?: number;
  /** how long `connect()` waits for Qdrant to answer (default 3 s) */
  connectTimeoutMs?: number;
  log: Logger;
}

/** the payload fields we index, so filtered search does not scan */
// turn_id: deletes match the user's ids by payload (see delete)
const INDEXED_FIELDS = ['user_id', 'session_id', 'turn_id'] as const;
/** points per upsert/delete/retrieve request: bounded request bodies (384 floats ≈ 7 KB a point) */
const CHUNK = 256;

type Client = QdrantClient;
/** the subset of Qdrant's filter language we send */
type Condition =
  | { key: string; match: { value: string | number | boolean } | { any: string[] } }
  | { key: string; range: { gt?: number; gte?: string | number; lt?: string; lte?: number } }
  | { should: Condition[] };
type Filter = { must: Condition[]; must_not?: Condition[] };

/** an entry's passages (part ≥ 1): left out where entries are counted. A point without `part` is a whole text. */
const PASSAGE: Condition = { key: 'part', range: { gt: 0 } };

/** Thrown by `connect()` when Qdrant does not answer; `app.ts` falls back to the embedded index. */
export class QdrantUnreachableError extends Error {
  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`Qdrant at ${url} is not reachable: ${reason}`, options);
    this.name = 'QdrantUnreachableError';
  }
}

/**
 * Semantic tier on Qdrant. One collection per embedder (cosine distance, keyword payload indexes on
 * `user_id` and `session_id`), created on first write; point ids are name-based UUIDs of the turn
 * ids, so upserts are idempotent and a delete needs no lookup. Deletes go to every collection of ours,
 * so an id is gone under every embedder. Stateless apart from a cache of the collections it has
 * ensured: any number of processes on any number of hosts share one Qdrant.
 *
 * Build it with `QdrantVectorIndex.connect()`, which checks that Qdrant answers; the constructor does
 * no I/O.
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly backend = 'qdrant' as const;
  readonly url: string;
  private readonly prefix: string;
  private readonly ensured = new Map<string, Promise<string>>();
  private readonly log: Logger;

  private constructor(
    private readonly writes: Client,
    private readonly reads: Client,
    options: QdrantIndexOptions,
    /** the server's version, as `GET /` reported it */
    readonly serverVersion: string,
  ) {
    this.url = options.url;
    this.prefix = options.prefix ?? 'neuralcleave';
    this.log = options.log;
  }

  /** Connects and checks that Qdrant answers (and accepts the API key); throws QdrantUnreachableError otherwise. */
  static async connect(options: QdrantIndexOptions): Promise<QdrantVectorIndex> {
    const prefix = options.prefix ?? 'neuralcleave';
    if (!PREFIX_PATTERN.test(prefix)) throw new Error(`qdrant collection prefix "${prefix}" must match ${PREFIX_PATTERN}`);
    const probe = client(options, options.connectTimeoutMs ?? 3_000);
    let version: string;
    try {
      version = (await probe.versionInfo()).version ?? 'unknown version';
      await probe.getCollections(); // the root answers without an API key; this does not
    } catch (err) {
      throw new QdrantUnreachableError(redactUrl(options.url), describe(err), { cause: err });
    }
    return new QdrantVectorIndex(client(options, options.timeoutMs ?? 10_000), client(options, options.searchTimeoutMs ?? 1_000), options, version);
  }

  /** the collection that holds this embedder's vectors */
  collectionFor(tag: EmbedderTag): string {
    return collectionName(this.prefix, tag);
  }

  async upsert(tag: EmbedderTag, points: readonly VectorPoint[]): Promise<void> {
    for (const p of points) {
      if (p.vector.length !== tag.dim) throw new Error(`vector of ${p.vector.length} dimensions; embedder ${tag.id} has ${tag.dim}`);
    }
    if (points.length === 0) return;
    const name = await this.ensure(tag);
    for (let i = 0; i < points.length; i += CHUNK) {
      const body = {
        wait: true,
        points: points.slice(i, i + CHUNK).map((p) => ({ id: pointId(p.payload.user_id, p.id, p.part ?? 0), vector: Array.from(p.vector), payload: payloadOf(p) })),
      };
      try {
        await this.writes.upsert(name, body);
      } catch (err) {
        if (status(err) !== 404) throw wrap('upsert', name, err);
        // the collection was dropped since we ensured it (memory clear --all from another process)
        this.ensured.delete(name);
        await this.ensure(tag);
        await this.call('upsert', name, () => this.writes.upsert(name, body));
      }
    }
    await this.trimParts(name, points);
  }

  /**
   * An upsert replaces its entries: their passages beyond the highest part it gave go (an edit to a
   * shorter text). One delete per user and highest part (mostly: every id of the batch, "part > 0").
   */
  private async trimParts(name: string, points: readonly VectorPoint[]): Promise<void> {
    const groups = new Map<string, { user: string; last: number; ids: string[] }>();
    for (const { user_id, id, last } of lastParts(points)) {
      const g = `${user_id}\u0000${last}`;
      const held = groups.get(g);
      if (held) held.ids.push(id);
      else groups.set(g, { user: user_id, last, ids: [id] });
    }
    for (const { user, last, ids } of groups.values()) {
      for (let i = 0; i < ids.length; i += CHUNK * 4) {
        const filter: Filter = {
          must: [{ key: 'user_id', match: { value: user } }, { key: 'turn_id', match: { any: ids.slice(i, i + CHUNK * 4) } }, { key: 'part', range: { gt: last } }],
        };
        await this.orEmpty('delete', name, () => this.writes.delete(name, { wait: true, filter }));
      }
    }
  }

  async search(tag: EmbedderTag, query: Float32Array, filter: VectorSearchFilter, k: number): Promise<VectorHit[]> {
    if (query.length !== tag.dim) throw new Error(`query of ${query.length} dimensions; embedder ${tag.id} has ${tag.dim}`);
    const name = this.collectionFor(tag);
    // a long turn's passages are points of their own and may fill the limit: while the best entries
    // are fewer than k and points were left out, the query is repeated for more of them
    for (let limit = k; ; limit *= 4) {
      const res = await this.orEmpty('query', name, () =>
        this.reads.query(name, { query: Array.from(query), filter: filterOf(filter, filter.where), limit, with_payload: true, with_vector: false }),
      );
      if (!res) return [];
      const best = new Map<string, VectorHit>();
      for (const p of res.points) {
        const id = turnId(p.payload);
        if (!best.has(id)) best.set(id, { id, score: p.score, part: partOf(p.payload), payload: toPayload(p.payload) });
      }
      if (best.size >= k || res.points.length < limit) return this.withText([...best.values()].slice(0, k), name, filter.user_id);
    }
  }

  /** Hits a passage won carry their entry's payload (a passage point keeps no text); one whose entry is gone is dropped. */
  private async withText(hits: VectorHit[], name: string, userId: string): Promise<VectorHit[]> {
    const passages = hits.filter((h) => h.part > 0);
    if (passages.length === 0) return hits;
    const found = await this.orEmpty('retrieve', name, () =>
      this.reads.retrieve(name, { ids: passages.map((h) => pointId(userId, h.id)), with_payload: true, with_vector: false }),
    );
    const whole = new Map((found ?? []).map((p) => [turnId(p.payload), toPayload(p.payload)]));
    return hits.flatMap((h) => {
      if (h.part === 0) return [h];
      const payload = whole.get(h.id);
      return payload ? [{ ...h, payload }] : [];
    });
  }

  async has(tag: EmbedderTag, userId: string, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    const name = this.collectionFor(tag);
    for (let i = 0; i < ids.length; i += CHUNK * 4) {
      const chunk = ids.slice(i, i + CHUNK * 4);
      const found = await this.orEmpty('retrieve', name, () =>
        this.writes.retrieve(name, { ids: chunk.map((id) => pointId(userId, id)), with_payload: ['turn_id'], with_vector: false }),
      );
      if (!found) return out;
      for (const p of found) out.add(turnId(p.payload));
    }
    return out;
  }

  /**
   * Deletes by payload (the user's points whose turn_id is one of `ids`), not by point id: a point
   * written before ids were scoped by user (named by the id alone) is matched too, so an upgraded
   * deployment never keeps a deleted memory's vector searchable.
   */
  async delete(userId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const names = await this.ourCollections();
    await Promise.all(
      names.map(async (name) => {
        for (let i = 0; i < ids.length; i += CHUNK * 4) {
          const filter: Filter = { must: [{ key: 'user_id', match: { value: userId } }, { key: 'turn_id', match: { any: ids.slice(i, i + CHUNK * 4) } }] };
          await this.orEmpty('delete', name, () => this.writes.delete(name, { wait: true, filter }));
        }
      }),
    );
  }

  async deleteWhere(filter: VectorFilter): Promise<number> {
    const names = await this.ourCollections();
    const removed = await Promise.all(
      names.map(async (name) => {
        const counted = await this.orEmpty('count', name, () => this.writes.count(name, { filter: entriesOf(filterOf(filter)), exact: true }));
        if (!counted || counted.count === 0) return 0;
        await this.orEmpty('delete', name, () => this.writes.delete(name, { wait: true, filter: filterOf(filter) }));
        return counted.count;
      }),
    );
    return removed.reduce((a, b) => a + b, 0);
  }

  /** drops every collection of ours (they are created again on the next write) */
  async deleteAll(): Promise<void> {
    const names = await this.ourCollections();
    this.ensured.clear();
    await Promise.all(names.map((name) => this.orEmpty('delete collection', name, () => this.writes.deleteCollection(name))));
  }

  /** drops the collections of every other embedder of this deployment */
  async deleteOtherEmbedders(keep: EmbedderTag): Promise<number> {
    const names = (await this.ourCollections()).filter((n) => n !== this.collectionFor(keep));
    const removed = await Promise.all(
      names.map(async (name) => {
        const counted = await this.orEmpty('count', name, () => this.writes.count(name, { filter: entriesOf({ must: [] }), exact: true }));
        this.ensured.delete(name);
        await this.orEmpty('delete collection', name, () => this.writes.deleteCollection(name));
        return counted?.count ?? 0;
      }),
    );
    return removed.reduce((a, b) => a + b, 0);
  }

  async count(tag?: EmbedderTag, filter?: VectorFilter): Promise<number> {
    const names = tag ? [this.collectionFor(tag)] : await this.ourCollections();
    const counts = await Promise.all(
      names.map((name) => this.orEmpty('count', name, () => this.writes.count(name, { filter: entriesOf(filter ? filterOf(filter) : { must: [] }), exact: true }))),
    );
    return counts.reduce((sum, c) => sum + (c?.count ?? 0), 0);
  }

  async ping(): Promise<boolean> {
    try {
      await this.reads.versionInfo();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.ensured.clear();
  }

  /** the names of every collection of this deployment, whatever embedder made it */
  async ourCollections(): Promise<string[]> {
    const { collections } = await this.call('list collections', '*', () => this.writes.getCollections());
    return collections.map((c) => c.name).filter((n) => isOurs(this.prefix, n));
  }

  /** Creates the embedder's collection and its payload indexes once per process (idempotent in Qdrant). */
  private ensure(tag: EmbedderTag): Promise<string> {
    const name = this.collectionFor(tag);
    let ready = this.ensured.get(name);
    if (!ready) {
      ready = this.create(name, tag).then(
        () => name,
        (err: unknown) => {
          this.ensured.delete(name); // retried by the next write
          throw err;
        },
      );
      this.ensured.set(name, ready);
    }
    return ready;
  }

  private async create(name: string, tag: EmbedderTag): Promise<void> {
    const { exists } = await this.call('collection exists', name, () => this.writes.collectionExists(name));
    if (!exists) {
      try {
        await this.writes.createCollection(name, { vectors: { size: tag.dim, distance: 'Cosine' } });
        this.log.info({ collection: name, embedder: tag.id, dim: tag.dim }, 'created qdrant collection');
      } catch (err) {
        // another process created it between our check and our create: that is what we wanted
        const now = await this.call('collection exists', name, () => this.writes.collectionExists(name));
        if (!now.exists) throw wrap('create collection', name, err);
      }
    }
    for (const field of INDEXED_FIELDS) {
      await this.call('create payload index', name, () => this.writes.createPayloadIndex(name, { field_name: field, field_schema: 'keyword', wait: true }));
    }
    // counts leave passages out, and an upsert trims an entry's parts, by a range on it
    await this.call('create payload index', name, () => this.writes.createPayloadIndex(name, { field_name: 'part', field_schema: 'integer', wait: true }));
  }

  private async call<T>(what: string, name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw wrap(what, name, err);
    }
  }

  /** a missing collection holds nothing: reads and deletes on it are no-ops, not errors */
  private async orEmpty<T>(what: string, name: string, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (err) {
      if (status(err) === 404) return null;
      throw wrap(what, name, err);
    }
  }
}

function client(options: QdrantIndexOptions, timeoutMs: number): Client {
  return new QdrantClient({
    url: options.url,
    timeout: timeoutMs,
    // the client's own check runs in its constructor and reports through console; connect() checks instead
    checkCompatibility: false,
    // as a header rather than `apiKey`, which would also force https and warn on console for http URLs
    ...(options.apiKey ? { headers: { 'api-key': options.apiKey } } : {}),
  });
}

/**
 * The user (and session) scope, and a retrieval filter as Qdrant conditions, so the query ranks only
 * matching points: lists as `match.any`, times as a datetime range (Qdrant ≥ 1.8), metadata values
 * as `match.value` on `metadata.<key>` (a fractional number as a one-point range: Qdrant matches
 * integers, strings and booleans only).
 */
function filterOf(f: VectorFilter, where?: RecordFilter): Filter {
  const must: Condition[] = [{ key: 'user_id', match: { value: f.user_id } }];
  if (f.session_id !== undefined) must.push({ key: 'session_id', match: { value: f.session_id } });
  if (where?.session_ids) must.push({ key: 'session_id', match: { any: where.session_ids } });
  if (where?.roles) must.push({ key: 'role', match: { any: where.roles } });
  if (where?.kinds) must.push({ key: 'kind', match: { any: where.kinds } });
  if (where?.created_after !== undefined || where?.created_before !== undefined) {
    const range: { gte?: string; lt?: string } = {};
    if (where.created_after !== undefined) range.gte = where.created_after;
    if (where.created_before !== undefined) range.lt = where.created_before;
    must.push({ key: 'created_at', range });
  }
  for (const [key, cond] of Object.entries(where?.metadata ?? {})) {
    const one = (v: MetadataScalar): Condition =>
      typeof v === 'number' && !Number.isInteger(v) ? { key: `metadata.${key}`, range: { gte: v, lte: v } } : { key: `metadata.${key}`, match: { value: v } };
    must.push({ should: acceptedValues(cond).map(one) });
  }
  return { must };
}

/** the filter's points that are whole texts (entries), not passages */
function entriesOf(f: Filter): Filter {
  return { ...f, must_not: [...(f.must_not ?? []), PASSAGE] };
}

/** a passage point holds its part and no copy of the turn's text (withText reads the entry's) */
function payloadOf(p: VectorPoint): Record<string, unknown> {
  const part = p.part ?? 0;
  return part === 0 ? { ...p.payload, turn_id: p.id } : { ...p.payload, content: '', turn_id: p.id, part };
}

type RawPayload = Record<string, unknown> | null | undefined;

function partOf(payload: RawPayload): number {
  const part = payload?.part;
  return typeof part === 'number' ? part : 0;
}

function turnId(payload: RawPayload): string {
  const id = payload?.turn_id;
  if (typeof id !== 'string') throw new Error('qdrant point without a turn_id in its payload');
  return id;
}

function toPayload(p: RawPayload): VectorPayload {
  const s = (k: string) => String(p?.[k] ?? '');
  return {
    user_id: s('user_id'),
    session_id: s('session_id'),
    role: s('role') as VectorPayload['role'],
    name: typeof p?.name === 'string' ? p.name : null,
    kind: (p?.kind ?? 'turn') as VectorPayload['kind'],
    content: s('content'),
    content_hash: s('content_hash'),
    created_at: s('created_at'),
    metadata: p?.metadata !== null && typeof p?.metadata === 'object' ? (p.metadata as Record<string, unknown>) : null,
  };
}

function status(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : undefined;
}

/** Qdrant answers errors as `{status: {error: "..."}}`; the client only keeps the HTTP status text. */
function describe(err: unknown): string {
  const e = err as { status?: number; statusText?: string; data?: { status?: { error?: string } }; message?: string; cause?: { code?: string; message?: string } };
  if (typeof e?.status === 'number') return `${e.status} ${e.statusText ?? ''}${e.data?.status?.error ? `: ${e.data.status.error}` : ''}`.trim();
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e?.message ?? 'error'} (${cause})` : (e?.message ?? String(err));
}

function wrap(what: string, name: string, err: unknown): Error {
  const wrapped = new Error(`qdrant ${what} on ${name}: ${describe(err)}`, { cause: err });
  (wrapped as { status?: number }).status = status(err);
  return wrapped;
}

/** a URL may carry credentials; reports, logs and errors never do */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '***';
      u.password = '';
    }
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
