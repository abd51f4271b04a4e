import type { EmbedderTag } from './vector-index.js';

/**
 * Turns texts into unit-length vectors, locally. `id` names the model (and version) so that vectors
 * of different embedders are never compared; `dim` is the vector length.
 */
export interface Embedder extends EmbedderTag {
  /** true when it matches words rather than meanings (the built-in `hash`): retrieval weighs its list lower */
  readonly lexical?: boolean;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

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

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}
