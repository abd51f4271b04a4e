import { setTimeout as sleep } from 'node:timers/promises';
import { prefixed, profileTag, type EmbedPurpose, type ModelProfile } from '../../domain/embedding-profile.js';
import { EmbedderLoadError, EmbedderUnavailableError, normalize, type Embedder } from '../../ports/embedder.js';
import type { FetchFn } from '../../ports/llm.js';
import { isRecord, type RequestFailure } from '../http/json.js';

/** One provider's wire format: texts in one request, raw vectors out in the same order. */
export interface EmbeddingWire {
  readonly provider: 'ollama' | 'openai';
  /** the origin the texts go to (messages, doctor) */
  readonly origin: string;
  request(texts: readonly string[], signal: AbortSignal): Promise<unknown[]>;
}

export interface RemoteOptions {
  model: string;
  profile: ModelProfile;
  /** the width asked for and expected; unset: the first answer's */
  dimensions?: number | undefined;
  /** most texts in one request */
  batchSize: number;
  /** retries of a request answered 429 or 5xx, or not answered */
  retries: number;
  /** the first retry's wait; doubled each time (a Retry-After of the server wins, up to MAX_WAIT_MS) */
  backoffMs?: number;
}

/** the longest wait before a retry, whatever Retry-After says: a job or a query is waiting */
const MAX_WAIT_MS = 10_000;
const PROBE = 'dimension probe';

/**
 * An embedder behind an embedding server (Ollama's `/api/embed`, an OpenAI-compatible
 * `/v1/embeddings`). Texts go in requests of at most `batchSize`, prefixed as the model's profile
 * says; a request answered 429 or 5xx, or not answered within the timeout, is retried with
 * exponential backoff, then rejected as an EmbedderUnavailableError (try later). The width is that of
 * the first answer (checked against `dimensions` when set), and every later answer is held to it: a
 * vector of another width is an EmbedderLoadError, nothing of that answer is used. The id is
 * `<provider>:<model>@<dim>` and the profile's tag.
 */
export class RemoteEmbedder implements Embedder {
  private readonly closing = new AbortController();

  private constructor(
    readonly id: string,
    readonly dim: number,
    private readonly wire: EmbeddingWire,
    private readonly o: RemoteOptions,
  ) {}

  /** Asks the server for one vector: its width becomes the embedder's. Rejects as embed() does. */
  static async connect(wire: EmbeddingWire, o: RemoteOptions): Promise<RemoteEmbedder> {
    // not cancellable: each attempt has its timeout, and a load under way is awaited by close()
    const [v] = await send(wire, o, [PROBE], undefined, new AbortController().signal);
    const dim = v!.length;
    if (o.dimensions !== undefined && dim !== o.dimensions) {
      throw new EmbedderLoadError(o.model, `${wire.provider} at ${wire.origin} answers ${dim}-dimension vectors, but embedding_dimensions is ${o.dimensions}`);
    }
    return new RemoteEmbedder(`${wire.provider}:${o.model}@${dim}${profileTag(o.profile, false)}`, dim, wire, o);
  }

  async embed(texts: readonly string[], purpose: EmbedPurpose = 'document'): Promise<Float32Array[]> {
    if (this.closing.signal.aborted) throw new Error(`embedder ${this.id} is closed`);
    const input = prefixed(this.o.profile, texts, purpose);
    const out: Float32Array[] = [];
    // one request at a time: a server embeds a batch at its own speed, and a second one in flight
    // only makes both wait (and counts twice against a rate limit)
    for (let at = 0; at < input.length; at += this.o.batchSize) {
      out.push(...(await send(this.wire, this.o, input.slice(at, at + this.o.batchSize), this.dim, this.closing.signal)));
    }
    return out;
  }

  /** Stops retries under way. */
  async close(): Promise<void> {
    this.closing.abort(new Error('embedder closed'));
  }
}

/** One batch, retried on 429, 5xx, timeouts and refused connections; its vectors checked and read. */
async function send(wire: EmbeddingWire, o: RemoteOptions, texts: readonly string[], dim: number | undefined, signal: AbortSignal): Promise<Float32Array[]> {
  for (let attempt = 0; ; attempt++) {
    let raw: unknown[];
    try {
      raw = await wire.request(texts, signal);
    } catch (err) {
      if (!(err instanceof EmbedderUnavailableError) || attempt >= o.retries || signal.aborted) throw err;
      const backoff = (o.backoffMs ?? 250) * 2 ** attempt;
      const wait = Math.min(MAX_WAIT_MS, err.retryAfterMs ?? backoff * (0.75 + Math.random() / 2));
      await sleep(wait, undefined, { signal }).catch(() => {});
      continue;
    }
    return vectorsOf(wire, o, raw, texts.length, dim);
  }
}

function vectorsOf(wire: EmbeddingWire, o: RemoteOptions, raw: unknown[], count: number, dim: number | undefined): Float32Array[] {
  const where = `${wire.provider} at ${wire.origin}`;
  if (raw.length !== count) throw new EmbedderLoadError(o.model, `${where} answered ${raw.length} vectors for ${count} texts`);
  return raw.map((r, i) => {
    if (!Array.isArray(r) || r.length === 0 || !r.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbedderLoadError(o.model, `${where} answered something that is not a vector of numbers for text ${i}`);
    }
    if (dim !== undefined && r.length !== dim) {
      throw new EmbedderLoadError(
        o.model,
        `${where} answered a ${r.length}-dimension vector, but its first answer had ${dim} dimensions (another model behind the same name? set embedding_model and run \`neuralcleave memory reindex\`)`,
      );
    }
    const v = Float32Array.from(r as number[]);
    return o.profile.normalize ? normalize(v) : v;
  });
}

/**
 * A failed request as the embedder reports it: worth retrying (no answer, a timeout, 429, 5xx) or
 * not (a refused key, an unknown model, a bad answer); the key, should a server echo it, is blanked.
 */
export function embeddingFailure(model: string, secret: string | undefined): RequestFailure {
  const scrub = (m: string) => (secret ? m.split(secret).join('[embedding_api_key]') : m);
  return (message, reason, o) => {
    const m = scrub(message);
    const status = o.httpStatus;
    if (reason === 'timeout' || reason === 'unreachable' || status === 429 || (status !== undefined && status >= 500)) {
      return new EmbedderUnavailableError(m, { httpStatus: status, retryAfterMs: o.retryAfterMs, cause: o.cause });
    }
    const hint = status === 401 || status === 403 ? (secret ? ' (check embedding_api_key)' : ' (set embedding_api_key)') : '';
    return new EmbedderLoadError(model, `${m}${hint}`);
  };
}

export interface WireOptions {
  url: string;
  model: string;
  apiKey?: string | undefined;
  dimensions?: number | undefined;
  timeoutMs: number;
  fetch?: FetchFn;
}

/** what every wire's requests share: the timeout's setting, the failure mapping, the server's error text */
export function commonRequest(provider: string, o: WireOptions, signal: AbortSignal) {
  return {
    provider,
    fetch: o.fetch ?? fetch,
    timeoutMs: o.timeoutMs,
    timeoutSetting: 'embedding_timeout_ms',
    signal,
    fail: embeddingFailure(o.model, o.apiKey),
    // Ollama says {error: "…"}, OpenAI-compatible servers {error: {message}}
    errorMessage: (b: unknown) => (isRecord(b) ? (typeof b.error === 'string' ? b.error : isRecord(b.error) && typeof b.error.message === 'string' ? b.error.message : undefined) : undefined),
  };
}
