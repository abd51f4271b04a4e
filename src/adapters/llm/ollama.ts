import { LlmUnavailableError } from '../../errors.js';
import { endpoint, isRecord, requestJson } from '../http/json.js';
import type { ChatMessage, ChatOptions, ChatReply, FetchFn, LlmProvider } from '../../ports/llm.js';

export interface OllamaOptions {
  baseUrl: string;
  model: string;
  timeoutMs: number;
  fetch?: FetchFn;
}

/**
 * Ollama's native chat API: `POST {base}/api/chat` with `stream: false` answers one JSON object
 * `{model, message: {role, content}, done, prompt_eval_count, eval_count}`; errors are `{error}`.
 * See https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
 */
export class OllamaProvider implements LlmProvider {
  readonly name = 'ollama' as const;
  readonly baseUrl: string;
  readonly model: string;
  private readonly fetch: FetchFn;
  private readonly timeoutMs: number;

  constructor(o: OllamaOptions) {
    this.baseUrl = o.baseUrl;
    this.model = o.model;
    this.timeoutMs = o.timeoutMs;
    this.fetch = o.fetch ?? fetch;
  }

  async chat(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatReply> {
    const modelOptions: Record<string, number> = {};
    if (options.temperature !== undefined) modelOptions.temperature = options.temperature;
    if (options.maxTokens !== undefined) modelOptions.num_predict = options.maxTokens;
    const body = await requestJson(
      endpoint(this.baseUrl, '/api/chat'),
      {
        method: 'POST',
        body: { model: this.model, messages, stream: false, ...(Object.keys(modelOptions).length > 0 ? { options: modelOptions } : {}) },
      },
      this.requestOptions(options.signal),
    );
    const message = isRecord(body) && isRecord(body.message) ? body.message : undefined;
    const content = typeof message?.content === 'string' ? message.content.trim() : '';
    if (content === '') {
      throw new LlmUnavailableError(`ollama at ${this.baseUrl} answered with no message content (model ${this.model})`, 'bad_response');
    }
    const b = body as Record<string, unknown>;
    return {
      content,
      model: typeof b.model === 'string' ? b.model : this.model,
      provider: 'ollama',
      usage: {
        prompt_tokens: typeof b.prompt_eval_count === 'number' ? b.prompt_eval_count : null,
        completion_tokens: typeof b.eval_count === 'number' ? b.eval_count : null,
      },
    };
  }

  async ping(timeoutMs = 2000): Promise<boolean> {
    try {
      await requestJson(endpoint(this.baseUrl, '/api/tags'), { method: 'GET' }, { ...this.requestOptions(), timeoutMs });
      return true;
    } catch {
      return false;
    }
  }

  private requestOptions(signal?: AbortSignal) {
    return {
      provider: this.name,
      fetch: this.fetch,
      timeoutMs: this.timeoutMs,
      ...(signal ? { signal } : {}),
      errorMessage: (b: unknown) => (isRecord(b) && typeof b.error === 'string' ? b.error : undefined),
    };
  }
}
