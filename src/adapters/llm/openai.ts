import { LlmUnavailableError } from '../../errors.js';
import { endpoint, isRecord, openAiApiRoot, requestJson } from '../http/json.js';
import type { ChatMessage, ChatOptions, ChatReply, FetchFn, LlmProvider } from '../../ports/llm.js';

export interface OpenAiOptions {
  /** e.g. https://api.openai.com or http://127.0.0.1:8000; a trailing /v1 is accepted too */
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  fetch?: FetchFn;
}

/**
 * Any OpenAI-compatible chat endpoint: `POST {base}/v1/chat/completions`, bearer `llm_api_key`,
 * answering `{model, choices: [{message: {content}}], usage}`; errors are `{error: {message}}`.
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai' as const;
  readonly baseUrl: string;
  readonly model: string;
  private readonly apiRoot: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: FetchFn;
  private readonly timeoutMs: number;

  constructor(o: OpenAiOptions) {
    this.baseUrl = o.baseUrl;
    this.model = o.model;
    this.timeoutMs = o.timeoutMs;
    this.fetch = o.fetch ?? fetch;
    // users paste either form of the base URL; both mean the same API root
    this.apiRoot = openAiApiRoot(o.baseUrl);
    this.headers = o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {};
  }

  async chat(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatReply> {
    const body = await requestJson(
      endpoint(this.apiRoot, '/chat/completions'),
      {
        method: 'POST',
        body: {
          model: this.model,
          messages,
          stream: false,
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
          ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
        },
      },
      this.requestOptions(options.signal),
    );
    const choice = isRecord(body) && Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : undefined;
    const message = choice && isRecord(choice.message) ? choice.message : undefined;
    const content = typeof message?.content === 'string' ? message.content.trim() : '';
    if (content === '') {
      throw new LlmUnavailableError(`openai at ${this.baseUrl} answered with no message content (model ${this.model})`, 'bad_response');
    }
    const b = body as Record<string, unknown>;
    const usage = isRecord(b.usage) ? b.usage : {};
    return {
      content,
      model: typeof b.model === 'string' ? b.model : this.model,
      provider: 'openai',
      usage: {
        prompt_tokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : null,
        completion_tokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : null,
      },
    };
  }

  async ping(timeoutMs = 2000): Promise<boolean> {
    try {
      await requestJson(endpoint(this.apiRoot, '/models'), { method: 'GET' }, { ...this.requestOptions(), timeoutMs });
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
      headers: this.headers,
      ...(signal ? { signal } : {}),
      errorMessage: (b: unknown) => (isRecord(b) && isRecord(b.error) && typeof b.error.message === 'string' ? b.error.message : undefined),
    };
  }
}
