import { endpoint, isRecord, openAiApiRoot, requestJson } from '../http/json.js';
import { EmbedderLoadError } from '../../ports/embedder.js';
import { commonRequest, type EmbeddingWire, type WireOptions } from './remote.js';

/**
 * An OpenAI-compatible embedding API (OpenAI, vLLM, llama.cpp server, TEI, LM Studio):
 * `POST {root}/v1/embeddings` with `{model, input: [texts], encoding_format: "float", dimensions?}`
 * and bearer `embedding_api_key` answers `{data: [{embedding, index}], model, usage}` (errors:
 * `{error: {message}}`). The data are put back in `index` order: the API does not promise input order.
 * See https://platform.openai.com/docs/api-reference/embeddings/create
 */
export function openAiWire(o: WireOptions): EmbeddingWire {
  const url = endpoint(openAiApiRoot(o.url), '/embeddings');
  const origin = new URL(url).origin;
  const headers = o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : undefined;
  return {
    provider: 'openai',
    origin,
    async request(texts, signal) {
      const body = await requestJson(
        url,
        { method: 'POST', body: { model: o.model, input: texts, encoding_format: 'float', ...(o.dimensions === undefined ? {} : { dimensions: o.dimensions }) } },
        { ...commonRequest('openai', o, signal), ...(headers ? { headers } : {}) },
      );
      const data = isRecord(body) && Array.isArray(body.data) ? body.data : undefined;
      if (!data || !data.every((d) => isRecord(d) && Number.isInteger(d.index))) {
        throw new EmbedderLoadError(o.model, `openai at ${origin} answered without a "data" list of {embedding, index} (is ${url} an OpenAI-compatible embeddings endpoint?)`);
      }
      const out: unknown[] = new Array(data.length);
      for (const d of data as Array<{ index: number; embedding: unknown }>) out[d.index] = d.embedding;
      return out;
    },
  };
}
