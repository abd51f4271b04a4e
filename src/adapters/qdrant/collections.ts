import { shortHash } from '../../domain/hash.js';
import type { EmbedderTag } from '../../ports/vector-index.js';

/**
 * One collection per embedder, so vectors of different models are never compared and a model change
 * never has to fit a new dimension into an old collection. The name is readable (prefix, model id,
 * dimension) and made unique by a short hash of the exact id, because sanitizing alone could map two
 * ids ("a/b" and "a_b") to one name.
 *
 * `neuralcleave--Xenova_all-MiniLM-L6-v2-384d--Ab3dE9xY`
 */
export function collectionName(prefix: string, tag: EmbedderTag): string {
  const readable = tag.id.replace(/@\d+$/, '').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 120);
  return `${prefix}--${readable}-${tag.dim}d--${shortHash(`${tag.id}\u0000${tag.dim}`, 8)}`;
}

/** whether a collection name is one of ours (made by collectionName with this prefix) */
export function isOurs(prefix: string, name: string): boolean {
  return name.startsWith(`${prefix}--`);
}

/** a prefix is the start of collection names: keep it to characters every Qdrant version accepts */
export const PREFIX_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
