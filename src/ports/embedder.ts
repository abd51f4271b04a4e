import type { EmbedPurpose } from '../domain/embedding-profile.js';
import type { EmbedderTag } from './vector-index.js';

export type { EmbedPurpose } from '../domain/embedding-profile.js';

/**
 * Turns texts into vectors compared by cosine (unit-length unless the model's profile says not to
 * normalize). `id` names the provider, model, width and the way texts are read, so that vectors of
 * different embedders are never compared; `dim` is the vector length. An embedder behind a server may
 * fail for a while: it rejects with an EmbedderUnavailableError, and the next call tries again. Not
 * covered: gathering concurrent calls into batches (BatchingEmbedder) and outage bookkeeping
 * (EmbedderProvider).
 */
export interface Embedder extends EmbedderTag {
  /** true when it matches words rather than meanings (the built-in `hash`): retrieval weighs its list lower */
  readonly lexical?: boolean;
  /** one vector per text, in order; `purpose` defaults to `document` */
  embed(texts: readonly string[], purpose?: EmbedPurpose): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** The embedder cannot be used as configured (a missing model, a refused key, a wrong width): retrying will not help. */
export class EmbedderLoadError extends Error {
  constructor(
    readonly model: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`cannot load embedding model "${model}": ${message}`, options);
    this.name = 'EmbedderLoadError';
  }
}

/**
 * The embedding server did not answer, timed out, or answered 429 or 5xx after every retry: worth
 * trying again later. The message names the server's origin and what happened, never a key.
 */
export class EmbedderUnavailableError extends Error {
  /** what the server answered (429, 503 …); undefined when it did not answer */
  readonly httpStatus: number | undefined;
  /** how long the server asked to wait (Retry-After) */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: { httpStatus?: number | undefined; retryAfterMs?: number | undefined; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EmbedderUnavailableError';
    this.httpStatus = options.httpStatus;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}
