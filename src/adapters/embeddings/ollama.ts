import { endpoint, isRecord, requestJson } from '../http/json.js';
import { EmbedderLoadError } from '../../ports/embedder.js';
import { commonRequest, type EmbeddingWire, type WireOptions } from './remote.js';

/**
 * Ollama's embedding API: `POST {url}/api/embed` with `{model, input: [texts]}` answers
 * `{model, embeddings: [[…], …]}` in the order of `input` (errors: `{error}`; an unknown model is a
 * 404 "model … not found, try pulling it first"). See https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings
 */
export function ollamaWire(o: WireOptions): EmbeddingWire {
  const url = endpoint(o.url, '/api/embed');
  const origin = new URL(url).origin;
  return {
    provider: 'ollama',
    origin,
    async request(texts, signal) {
      const body = await requestJson(url, { method: 'POST', body: { model: o.model, input: texts, truncate: true } }, commonRequest('ollama', o, signal));
      if (!isRecord(body) || !Array.isArray(body.embeddings)) {
        throw new EmbedderLoadError(o.model, `ollama at ${origin} answered without an "embeddings" list (is ${url} an Ollama server?)`);
      }
      return body.embeddings;
    },
  };
}
