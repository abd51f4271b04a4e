import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { isLoopbackUrl } from '../adapters/http/json.js';
import { OllamaProvider } from '../adapters/llm/ollama.js';
import { OpenAiProvider } from '../adapters/llm/openai.js';
import type { FetchFn, LlmProvider } from '../ports/llm.js';

/** the OpenAI API, when llm_provider = "openai" names no base URL */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com';
/** the model asked of an OpenAI-compatible endpoint when llm_model is unset */
export const OPENAI_DEFAULT_MODEL = 'gpt-4o-mini';

/** What `doctor` shows about the LLM: which endpoint every call goes to, and why. */
export interface LlmDescription {
  provider: 'ollama' | 'openai' | 'none';
  model: string | null;
  base_url: string | null;
  privacy_mode: boolean;
  /** what the configuration asked for, before privacy mode */
  configured_provider: Config['llm_provider'];
  /** one human line */
  summary: string;
}

export interface LlmSelection {
  /** the provider every LLM call uses; null when none is configured */
  readonly provider: LlmProvider | null;
  describe(): LlmDescription;
}

/**
 * Decides once, at wiring, which endpoint LLM calls go to. `privacy_mode = true` overrides
 * everything else: every call goes to the local Ollama at `ollama_url` (with `llm_model` when the
 * configured provider is Ollama, else `ollama_model`), whatever `llm_provider` and `llm_base_url` say
 * — and it does so even with `llm_provider = "none"`, since in privacy mode the local Ollama is the LLM.
 */
export function selectLlm(config: Config, log: Logger, fetchFn?: FetchFn): LlmSelection {
  const common = { timeoutMs: config.llm_timeout_ms, ...(fetchFn ? { fetch: fetchFn } : {}) };
  let provider: LlmProvider | null = null;
  let summary: string;

  if (config.privacy_mode) {
    const model = config.llm_provider === 'ollama' && config.llm_model ? config.llm_model : config.ollama_model;
    provider = new OllamaProvider({ baseUrl: config.ollama_url, model, ...common });
    const ignored =
      config.llm_provider === 'openai'
        ? ` (the configured openai endpoint ${config.llm_base_url ?? OPENAI_DEFAULT_BASE_URL} is not used)`
        : config.llm_provider === 'ollama' && config.llm_base_url && config.llm_base_url !== config.ollama_url
          ? ` (llm_base_url ${config.llm_base_url} is not used)`
          : '';
    summary = `ollama ${model} at ${config.ollama_url} — privacy mode: every LLM call goes to this local Ollama${ignored}`;
    if (!isLoopbackUrl(config.ollama_url)) {
      summary += '; warning: ollama_url is not a loopback address';
      log.warn({ ollama_url: config.ollama_url }, 'privacy_mode is on but ollama_url is not a loopback address: conversation text leaves this machine');
    }
  } else if (config.llm_provider === 'ollama') {
    const baseUrl = config.llm_base_url ?? config.ollama_url;
    const model = config.llm_model ?? config.ollama_model;
    provider = new OllamaProvider({ baseUrl, model, ...common });
    summary = `ollama ${model} at ${baseUrl}`;
  } else if (config.llm_provider === 'openai') {
    const baseUrl = config.llm_base_url ?? OPENAI_DEFAULT_BASE_URL;
    const model = config.llm_model ?? OPENAI_DEFAULT_MODEL;
    provider = new OpenAiProvider({ baseUrl, model, ...(config.llm_api_key ? { apiKey: config.llm_api_key } : {}), ...common });
    summary = `openai ${model} at ${baseUrl}${config.llm_api_key ? '' : ' (no llm_api_key set)'}`;
  } else {
    summary = 'none — /chat answers 503 and compaction uses the extractive summarizer (set llm_provider, or privacy_mode for a local Ollama)';
  }

  const description: LlmDescription = Object.freeze({
    provider: provider?.name ?? 'none',
    model: provider?.model ?? null,
    base_url: provider?.baseUrl ?? null,
    privacy_mode: config.privacy_mode,
    configured_provider: config.llm_provider,
    summary,
  });
  return { provider, describe: () => description };
}
