import { storableGenerated } from '../domain/turn.js';
import { isSummaryTurn } from '../compaction/summarizers/summarizer.js';
import type { TokenCounter } from '../compaction/tokens.js';
import type { RetrievalResult } from '../domain/entry.js';
import type { Turn } from '../domain/turn.js';
import { LlmUnavailableError, ValidationError, describeDetails } from '../errors.js';
import type { ChatMessage, ChatReply, LlmProvider } from '../ports/llm.js';
import type { Logger } from '../logger.js';
import type { WritePath } from '../memory/write-path.js';
import { throwIfAbandoned } from '../retrieval/budget.js';
import type { Retriever } from '../retrieval/retrieve.js';
import type { ShortTermStore } from '../ports/short-term.js';
import { parseOrThrow } from '../validate.js';
import { chatRequestSchema, type ChatRequest, type ChatRequestInput } from './request.js';

/** the top_k the chat pipeline retrieves with (docs/architecture.md, retrieval) */
export const CHAT_TOP_K = 8;

export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful assistant with a long-term memory of your conversations with this user. ' +
  'Answer the latest message. When the memory below is relevant, use it naturally; never invent memories.';


export interface ChatResponse {
  reply: string;
  user_id: string;
  session_id: string;
  /** the two turns written: the message, then the reply */
  turn_ids: { user: string; assistant: string };
  provider: ChatReply['provider'];
  model: string;
  usage: ChatReply['usage'];
  /** what retrieval found for the message (with `explain`): the memories the reply could use */
  memories: RetrievalResult[];
  /** the memory text the LLM was given (memories already in the recent turns are not repeated) */
  prompt_blocks: string;
}

/** What a message would give the LLM: the retrieved memories and the prompt's memory text. */
export type ChatPreview = Pick<ChatResponse, 'user_id' | 'session_id' | 'memories' | 'prompt_blocks'>;

export interface ChatPipelineDeps {
  retriever: Retriever;
  writePath: WritePath;
  shortTerm: ShortTermStore;
  /** null when no LLM is configured: every chat then fails with 503 */
  llm: LlmProvider | null;
  tokens: TokenCounter;
  log: Logger;
  contextWindow: number;
  maxTurnChars: number;
  systemPrompt?: string;
}

/**
 * The chat pipeline (docs/architecture.md, chat): retrieve (top_k 8) → prompt blocks → LLM (system prompt and memory,
 * the session's recent turns, the message) → reply → both turns written through the write path, the
 * message then the reply. The compaction check follows from the write path's `onAccepted` hook, off
 * the reply's path. When the LLM fails nothing is written: the client may simply retry.
 */
export class ChatPipeline {
  private readonly schema;
  private readonly systemPrompt: string;

  constructor(private readonly deps: ChatPipelineDeps) {
    this.schema = chatRequestSchema(deps.maxTurnChars);
    this.systemPrompt = deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  }

  get available(): boolean {
    return this.deps.llm !== null;
  }

  /**
   * What a chat message would put before the LLM, without asking one or writing anything: the
   * memories retrieved for it (with `explain`) and the memory text of the prompt (`chat --no-llm`).
   */
  async preview(input: ChatRequestInput | unknown): Promise<ChatPreview> {
    const req = parseOrThrow(this.schema, input, 'chat request');
    const { retrieved, promptBlocks } = await this.gather(req);
    return { user_id: req.user_id, session_id: req.session_id, memories: retrieved.results, prompt_blocks: promptBlocks };
  }

  /** `signal`: the caller left; the retrieval then stops and this rejects with a RequestAbortedError before the prompt is built */
  private async gather(req: ChatRequest, signal?: AbortSignal) {
    const [retrieved, history] = await Promise.all([
      this.deps.retriever.retrieve({ query: req.message.slice(0, 4000), user_id: req.user_id, session_id: req.session_id, top_k: CHAT_TOP_K }, Date.now(), signal ? { signal } : {}),
      this.deps.shortTerm.recent(req.user_id, req.session_id),
    ]);
    // counted a slice of the event loop at a time, so prompt()'s counts below are lookups: a
    // 32,000-character message merged in one go held the loop 15–30 ms, more on a loaded machine
    const { tokens } = this.deps;
    await tokens.countSoon(req.message);
    await tokens.sessionSoon(history);
    throwIfAbandoned(signal);
    return { retrieved, ...this.prompt(req.message, retrieved.results, history) };
  }

  /**
   * `onRetrieved` hears what retrieval found before the LLM is asked, so a caller can still show it
   * (`/why`) when the LLM then fails. `signal`: the caller left (an HTTP client that closed its
   * connection): the retrieval stops, the LLM is not asked if it has not been yet (its call is
   * cancelled if it has), nothing is written, and this rejects with a RequestAbortedError.
   */
  async chat(input: ChatRequestInput | unknown, options: { signal?: AbortSignal; onRetrieved?: (p: ChatPreview) => void } = {}): Promise<ChatResponse> {
    const req = parseOrThrow(this.schema, input, 'chat request');
    const llm = this.deps.llm;
    if (!llm) {
      throw new LlmUnavailableError('no LLM is configured: set llm_provider (ollama or openai), or privacy_mode = true for the local Ollama', 'not_configured');
    }
    const receivedAt = Date.now();
    const userTurn = { user_id: req.user_id, session_id: req.session_id, role: 'user' as const, content: req.message, created_at: new Date(receivedAt).toISOString() };
    // the message must be storable before the LLM is asked anything
    this.validateMessage(userTurn);
    const { signal } = options;
    const { retrieved, messages, promptBlocks } = await this.gather(req, signal);
    options.onRetrieved?.({ user_id: req.user_id, session_id: req.session_id, memories: retrieved.results, prompt_blocks: promptBlocks });
    // nobody would read the reply: the LLM is not asked
    throwIfAbandoned(signal);
    let answer: ChatReply;
    try {
      answer = await llm.chat(messages, signal ? { signal } : {});
    } catch (err) {
      // a call cancelled because the caller left is no LLM failure
      throwIfAbandoned(signal);
      throw err;
    }
    throwIfAbandoned(signal);

    let reply: string;
    try {
      reply = storableGenerated(answer.content, this.deps.maxTurnChars);
    } catch {
      throw new LlmUnavailableError(`${answer.provider} answered only unprintable characters`, 'bad_response');
    }
    const repliedAt = Math.max(Date.now(), receivedAt + 1);
    const written = await this.deps.writePath.addTurns([
      userTurn,
      {
        user_id: req.user_id,
        session_id: req.session_id,
        role: 'assistant',
        content: reply,
        created_at: new Date(repliedAt).toISOString(),
        metadata: { llm: `${answer.provider}/${answer.model}` },
      },
    ]);
    return {
      reply,
      user_id: req.user_id,
      session_id: req.session_id,
      turn_ids: { user: written.ids[0]!, assistant: written.ids[1]! },
      provider: answer.provider,
      model: answer.model,
      usage: answer.usage,
      memories: retrieved.results,
      prompt_blocks: promptBlocks,
    };
  }

  private validateMessage(turn: unknown): void {
    try {
      this.deps.writePath.validate([turn]);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const details = (err.details ?? []).map((d) => ({ ...d, path: d.path === 'content' ? 'message' : d.path }));
      throw new ValidationError(`invalid chat request: ${describeDetails(details)}`, details);
    }
  }

  /**
   * system prompt + memory blocks, then the session's history as chat messages, then the message.
   * History is cut from its oldest end (a summary goes last) when it would not leave room in the
   * context window for the reply; the compaction the reply triggers shrinks it for next time.
   */
  private prompt(message: string, results: readonly RetrievalResult[], history: readonly Turn[]): { messages: ChatMessage[]; promptBlocks: string } {
    const { tokens, contextWindow } = this.deps;
    const inHistory = new Set(history.map((t) => t.id));
    const promptBlocks = this.deps.retriever.promptBlocks(results.filter((r) => !inHistory.has(r.id)));
    const system = promptBlocks ? `${this.systemPrompt}\n\n${promptBlocks}` : this.systemPrompt;

    const replyReserve = Math.min(1024, Math.floor(contextWindow / 4));
    let budget = contextWindow - replyReserve - tokens.message(system) - tokens.message(message) - 3;
    const kept: Turn[] = [];
    // newest first, so whatever must go is the oldest; the summary stands for the oldest of all
    const ordered = [...history.filter((t) => !isSummaryTurn(t))].reverse().concat(history.filter(isSummaryTurn));
    for (const t of ordered) {
      const cost = tokens.turn(t);
      if (cost > budget) break;
      kept.push(t);
      budget -= cost;
    }
    const keptIds = new Set(kept.map((t) => t.id));
    const messages: ChatMessage[] = [{ role: 'system', content: system }];
    for (const t of history) if (keptIds.has(t.id)) messages.push(toMessage(t));
    messages.push({ role: 'user', content: message });
    return { messages, promptBlocks };
  }
}

function toMessage(t: Turn): ChatMessage {
  if (isSummaryTurn(t)) return { role: 'system', content: t.content };
  if (t.role === 'tool') return { role: 'system', content: `Tool output${t.name ? ` (${t.name})` : ''}: ${t.content}` };
  return { role: t.role, content: t.name ? `${t.name}: ${t.content}` : t.content };
}

