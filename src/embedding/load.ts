import type { Config } from '../config/schema.js';
import type { Embedder } from '../ports/embedder.js';
import { HashEmbedder } from './hash.js';

export type EmbedderConfig = Pick<Config, 'embedding_model' | 'model_dir' | 'model_cache_dir' | 'embedding_load_timeout_ms'>;

/**
 * Loads the configured embedder: `hash` is built in; any other name is a transformers.js model, read
 * from `model_dir` when set (no download), else downloaded once into `model_cache_dir`. Rejects with
 * an EmbedderLoadError when the model cannot be loaded or proves unusable.
 */
export async function loadEmbedder(config: EmbedderConfig): Promise<Embedder> {
  if (config.embedding_model === 'hash') return new HashEmbedder();
  // imported on demand: onnxruntime costs ~100 ms and memory that hash-only installs never need
  const { TransformersEmbedder } = await import('../adapters/transformers/embedder.js');
  return TransformersEmbedder.load(config.embedding_model, {
    modelDir: config.model_dir,
    cacheDir: config.model_cache_dir,
    loadTimeoutMs: config.embedding_load_timeout_ms,
  });
}
