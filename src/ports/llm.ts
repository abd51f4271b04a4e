/** The roles an LLM call carries; the chat pipeline maps stored turns onto them. */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ChatOptions {
  /** aborts the call (a client that went away); the provider's own timeout applies as well */
  signal?: AbortSignal;
  temperature?: number;
  /** cap on the reply's tokens */
  maxTokens?: number;
}

export interface ChatReply {
  content: string;
  /** the model that answered, as the endpoint reports it */
  model: string;
  provider: LlmProviderName;
  usage: { prompt_tokens: number | null; completion_tokens: number | null };
}

export type LlmProviderName = 'ollama' | 'openai';

/**
 * One chat-completion endpoint. Contract: `chat` sends the messages once (no retries: callers decide)
 * under the configured timeout, resolves with a non-empty reply, and otherwise rejects with an
 * `LlmUnavailableError` whose `reason` says what went wrong. Not covered: streaming, tools.
 */
export interface LlmProvider {
  readonly name: LlmProviderName;
  readonly model: string;
  readonly baseUrl: string;
  chat(messages: readonly ChatMessage[], options?: ChatOptions): Promise<ChatReply>;
  /** true when the endpoint answers its model listing (doctor) */
  ping(timeoutMs?: number): Promise<boolean>;
}

/** The fetch the providers use; tests and callers may pass another. */
export type FetchFn = typeof fetch;
