import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * HTTP servers, started by a test on a free loopback port, that speak the Ollama chat protocol
 * (`POST /api/chat` with `stream: false`, `GET /api/tags`) and the OpenAI chat-completions protocol
 * (`POST /v1/chat/completions`, `GET /v1/models`, bearer key). They record every request and answer
 * through a responder the test sets — fakes of the LLM endpoints, not of our code.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export type FakeAnswer =
  | { content: string; model?: string }
  /** any status and JSON body, as the endpoint would send it */
  | { status: number; body: unknown }
  /** a body that is not JSON */
  | { raw: string; status?: number }
  /** never answers (until the server closes) */
  | 'hang';

export type Responder = (req: RecordedRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeLlm {
  url: string;
  requests: RecordedRequest[];
  /** the chat-completion requests only */
  chats(): RecordedRequest[];
  respond: Responder;
  close(): Promise<void>;
}

/** the last user message of a chat request */
export function lastUserMessage(req: RecordedRequest): string {
  const messages = (req.body?.messages ?? []) as Array<{ role: string; content: string }>;
  return [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}

/** true for the compaction summarizer's requests (its instructions open the system message) */
export function isSummaryRequest(req: RecordedRequest): boolean {
  const first = req.body?.messages?.[0];
  return first?.role === 'system' && String(first.content).startsWith('You keep the memory of a conversation');
}

/** echoes chat messages, and answers summary requests with one bullet */
export const defaultResponder: Responder = (req) =>
  isSummaryRequest(req) ? { content: '- The user and the assistant talked (fake summary).' } : { content: `You said: ${lastUserMessage(req)}` };

async function start(kind: 'ollama' | 'openai', respond: Responder, apiKey?: string): Promise<FakeLlm> {
  const requests: RecordedRequest[] = [];
  const chatPath = kind === 'ollama' ? '/api/chat' : '/v1/chat/completions';
  const listPath = kind === 'ollama' ? '/api/tags' : '/v1/models';
  const fake: FakeLlm = {
    url: '',
    requests,
    chats: () => requests.filter((r) => r.path === chatPath),
    respond,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (kind === 'openai' && apiKey !== undefined && req.headers.authorization !== `Bearer ${apiKey}`) {
        return send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
      }
      if (req.method === 'GET' && req.url === listPath) {
        return send(200, kind === 'ollama' ? { models: [{ name: 'fake' }] } : { object: 'list', data: [{ id: 'fake', object: 'model' }] });
      }
      if (req.method !== 'POST' || req.url !== chatPath) return send(404, kind === 'ollama' ? { error: 'not found' } : { error: { message: 'not found' } });
      void Promise.resolve(fake.respond(recorded)).then((a) => {
        if (a === 'hang') return;
        if ('raw' in a) {
          res.writeHead(a.status ?? 200, { 'content-type': 'text/plain' });
          return res.end(a.raw);
        }
        if ('status' in a) return send(a.status, a.body);
        const b = recorded.body as { model?: string };
        const model = a.model ?? b.model ?? 'fake';
        if (kind === 'ollama') {
          return send(200, { model, created_at: new Date().toISOString(), message: { role: 'assistant', content: a.content }, done: true, prompt_eval_count: 11, eval_count: 7 });
        }
        return send(200, {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: a.content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        });
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export function startFakeOllama(respond: Responder = defaultResponder): Promise<FakeLlm> {
  return start('ollama', respond);
}

export function startFakeOpenAi(respond: Responder = defaultResponder, options: { apiKey?: string } = {}): Promise<FakeLlm> {
  return start('openai', respond, options.apiKey);
}
