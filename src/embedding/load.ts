import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { isLoopbackUrl } from '../adapters/http/json.js';
import { ollamaWire } from '../adapters/embeddings/ollama.js';
import { openAiWire } from '../adapters/embeddings/openai.js';
import { RemoteEmbedder } from '../adapters/embeddings/remote.js';
import { profileFor, type ModelProfile } from '../domain/embedding-profile.js';
import type { Embedder } from '../ports/embedder.js';
import type { FetchFn } from '../ports/llm.js';
import { HashEmbedder } from './hash.js';

type LoadKeys = 'embedding_model' | 'model_dir' | 'model_cache_dir' | 'embedding_load_timeout_ms';
type DefaultedKeys =
  | 'embedding_provider'
  | 'embedding_url'
  | 'embedding_api_key'
  | 'embedding_dimensions'
  | 'embedding_batch_size'
  | 'embedding_timeout_ms'
  | 'embedding_retries'
  | 'embedding_url_is_local'
  | 'embedding_pooling'
  | 'embedding_normalize'
  | 'embedding_query_prefix'
  | 'embedding_document_prefix'
  | 'privacy_mode'
  | 'ollama_url';
/** the keys the embedder is built from (the embedding_* keys beyond the first four take the schema's defaults) */
export type EmbedderConfig = Pick<Config, LoadKeys> & Partial<Pick<Config, DefaultedKeys>>;

/** the transformers.js model the schema defaults to, which no embedding server serves under that name */
const TRANSFORMERS_DEFAULT = 'Xenova/all-MiniLM-L6-v2';
/** what each provider is asked for when embedding_model is left at its default, and where */
const REMOTE_DEFAULTS = {
  ollama: { model: 'nomic-embed-text', url: (c: EmbedderConfig) => c.ollama_url ?? 'http://127.0.0.1:11434' },
  openai: { model: 'text-embedding-3-small', url: () => 'https://api.openai.com' },
} as const;

/** Which embedder the configuration selects, with every default resolved: what doctor shows. */
export interface EmbeddingSetup {
  provider: 'transformers' | 'hash' | 'ollama' | 'openai';
  model: string;
  /** the server texts are sent to; null for an in-process embedder */
  url: string | null;
  profile: ModelProfile;
  /** one human line: the provider, the model and where text goes */
  summary: string;
}

/**
 * Resolves the embedding settings once, at wiring. Rejects, as a ConfigError naming the keys, a
 * setup that cannot work or must not: privacy mode with an embedding server that is not loopback
 * (unless embedding_url_is_local declares it local), and the OpenAI API with no key.
 */
export function embeddingSetup(c: EmbedderConfig): EmbeddingSetup {
  const provider = c.embedding_provider === 'transformers' && c.embedding_model === 'hash' ? 'hash' : (c.embedding_provider ?? 'transformers');
  const profile = profileFor(c.embedding_model, c);
  if (provider === 'hash') return { provider, model: 'hash', url: null, profile, summary: 'hash (built-in lexical embedder, in process)' };
  if (provider === 'transformers') {
    const where = c.model_dir ? `from ${c.model_dir}` : `downloaded once into ${c.model_cache_dir}`;
    return { provider, model: c.embedding_model, url: null, profile, summary: `transformers ${c.embedding_model} (in process, ${where}): no text leaves this machine` };
  }
  const d = REMOTE_DEFAULTS[provider];
  const model = c.embedding_model === TRANSFORMERS_DEFAULT ? d.model : c.embedding_model;
  const url = c.embedding_url ?? d.url(c);
  const local = isLoopbackUrl(url);
  if (c.privacy_mode && !local && !(c.embedding_url_is_local && c.embedding_url !== undefined)) {
    throw new ConfigError(
      `privacy_mode is on, but embedding_provider "${provider}" would send the text of every turn and query to ${new URL(url).origin}, which is not a loopback address. ` +
        'Use embedding_provider "transformers" or "hash", an embedding server on this machine (127.0.0.1, localhost, [::1]), ' +
        'or, for a server on a network of your own, set embedding_url to it and embedding_url_is_local = true',
      [{ path: 'embedding_url', message: `${new URL(url).origin} is not a loopback address and privacy_mode is on` }],
    );
  }
  if (provider === 'openai' && c.embedding_url === undefined && !c.embedding_api_key) {
    throw new ConfigError('embedding_provider "openai" with no embedding_url asks the OpenAI API, which needs embedding_api_key (or set embedding_url to an OpenAI-compatible server of your own)', [
      { path: 'embedding_api_key', message: 'required for https://api.openai.com' },
    ]);
  }
  const off = local ? 'this machine' : c.embedding_url_is_local ? 'a server declared local (embedding_url_is_local)' : 'ANOTHER MACHINE: the text of every turn and query leaves this one';
  return { provider, model, url, profile, summary: `${provider} ${model} at ${new URL(url).origin} — text is sent to ${off}` };
}

/**
 * Loads the configured embedder: `hash` is built in; `transformers` reads a transformers.js model from
 * `model_dir` when set (no download), else downloads it once into `model_cache_dir`; `ollama` and
 * `openai` ask their server for one vector to learn its width. Rejects with an EmbedderLoadError when
 * the model cannot be used as configured, an EmbedderUnavailableError when the server does not answer.
 */
export async function loadEmbedder(config: EmbedderConfig, fetchFn?: FetchFn): Promise<Embedder> {
  const setup = embeddingSetup(config);
  if (setup.provider === 'hash') return new HashEmbedder();
  if (setup.provider === 'transformers') {
    // imported on demand: onnxruntime costs ~100 ms and memory that hash-only installs never need
    const { TransformersEmbedder } = await import('../adapters/transformers/embedder.js');
    return TransformersEmbedder.load(config.embedding_model, {
      modelDir: config.model_dir,
      cacheDir: config.model_cache_dir,
      loadTimeoutMs: config.embedding_load_timeout_ms,
      profile: setup.profile,
    });
  }
  const wireOptions = {
    url: setup.url!,
    model: setup.model,
    apiKey: config.embedding_api_key,
    dimensions: config.embedding_dimensions,
    timeoutMs: config.embedding_timeout_ms ?? 30_000,
    ...(fetchFn ? { fetch: fetchFn } : {}),
  };
  const wire = setup.provider === 'ollama' ? ollamaWire(wireOptions) : openAiWire(wireOptions);
  return RemoteEmbedder.connect(wire, {
    model: setup.model,
    profile: setup.profile,
    dimensions: config.embedding_dimensions,
    batchSize: config.embedding_batch_size ?? 32,
    retries: config.embedding_retries ?? 3,
  });
}
