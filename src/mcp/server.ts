import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode as RpcErrorCode, McpError, type CallToolResult, type ListResourcesResult } from '@modelcontextprotocol/sdk/types.js';
import { actingUser } from '../api/access.js';
import { defaultUserOf } from '../api/auth.js';
import { toHttpError } from '../api/errors.js';
import type { ApiSchemas } from '../api/schemas.js';
import { parseRequest } from '../api/validate.js';
import { SessionIdSchema, UserIdSchema } from '../domain/turn.js';
import { NeuralCleaveError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { parseOrThrow } from '../validate.js';
import { mcpTools, type ToolContext, type ToolDef } from './tools.js';

/** where a failed call's `{code, message, details}` travels in the tool result, for programs */
export const ERROR_META_KEY = 'neuralcleave/error';

const SERVER_INFO = { name: 'neuralcleave-memory', version: '0.1.0' };
const INSTRUCTIONS =
  'Conversation memory. Before answering a message that may depend on earlier conversations, call `retrieve` with the ' +
  'message (and the current session_id) and use its prompt_blocks. After each exchange worth remembering, call `add_turns` ' +
  'with the user message and your reply. Use update_memory/delete_memory when the user corrects or withdraws something; ' +
  'forget_session only when they ask to erase a whole conversation.';

export interface McpDeps extends ToolContext {
  schemas: ApiSchemas;
  log: Logger;
}

/**
 * A tool failure as an MCP tool result (`isError`), never a protocol error, so the model reads what went
 * wrong and the transport stays up. The code is the HTTP API's (src/errors.ts) through the same mapping,
 * in the text and under `_meta`.
 */
function toolError(err: unknown, tool: string, log: Logger): CallToolResult {
  const { body, unexpected } = toHttpError(err);
  if (unexpected) log.error({ err, tool }, 'unexpected error in an MCP tool');
  const { code, message, details } = body.error;
  const lines = details?.map((d) => `- ${d.path}: ${d.message}`) ?? [];
  return { isError: true, content: [{ type: 'text', text: [`${code}: ${message}`, ...lines].join('\n') }], _meta: { [ERROR_META_KEY]: body.error } };
}

/** `signal`: the SDK's for this request (a cancellation, or the connection closed) */
async function call(def: ToolDef, args: unknown, deps: McpDeps, signal?: AbortSignal): Promise<CallToolResult> {
  try {
    const parsed = parseRequest(def.input, args ?? {}, 'arguments');
    const result = await def.run(parsed, deps, signal);
    return { content: [{ type: 'text', text: def.text(result) }], structuredContent: result };
  } catch (err) {
    return toolError(err, def.name, deps.log);
  }
}

const RECENT_TURNS_URI = 'memory://users/{user_id}/sessions/{session_id}/recent';

/** a URI template variable, percent-decoded; a malformed escape (`%zz`, a cut UTF-8 sequence) is a bad_request naming the variable */
function uriVar(value: unknown, what: string): string {
  try {
    return decodeURIComponent(String(value));
  } catch {
    throw new ValidationError(`invalid ${what}: malformed percent-escape in ${JSON.stringify(String(value))}`, [
      { path: what, message: 'malformed percent-escape: each % must start an escape of UTF-8 bytes (%xx, two hex digits)' },
    ]);
  }
}
const SESSIONS_LISTED = 50;

/** The newest sessions of the users a key is bound to (an unbound principal: the default user's). */
async function listSessions(deps: McpDeps): Promise<ListResourcesResult> {
  const p = deps.principal;
  const users = p.kind === 'key' && p.users !== 'all' ? [...p.users] : [defaultUserOf(p)];
  const resources = [];
  for (const user of users) {
    for (const s of await deps.memory.sessions(user, SESSIONS_LISTED)) {
      const uri = `memory://users/${encodeURIComponent(user)}/sessions/${encodeURIComponent(s.session_id)}/recent`;
      resources.push({ uri, name: `${user} / ${s.session_id}`, description: `last active ${s.last_at}`, mimeType: 'application/json' });
    }
  }
  return { resources };
}

/**
 * One MCP server acting for one principal: a stdio connection's (`neuralcleave mcp`), or one HTTP
 * request's (`/mcp`, stateless, so each request carries its own API key).
 */
export function createMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} } });
  const tools = new Map(mcpTools(deps.schemas).map((t) => [t.name, t]));
  for (const t of tools.values()) {
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: t.input, ...(t.output ? { outputSchema: t.output } : {}), annotations: t.annotations },
      (args: unknown, extra: { signal: AbortSignal }) => call(t, args, deps, extra.signal),
    );
  }
  // The SDK's own tools/call handler validates arguments before the tool runs and reports a failure as
  // text without our error code; this one (the documented low-level hook) validates with the same
  // schemas through parseOrThrow, so a bad argument is a `bad_request` naming each field, as over HTTP.
  server.server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const t = tools.get(req.params.name);
    if (!t) throw new McpError(RpcErrorCode.InvalidParams, `no tool "${req.params.name}"; tools: ${[...tools.keys()].join(', ')}`);
    return call(t, req.params.arguments, deps, extra.signal);
  });

  server.registerResource(
    'session-recent-turns',
    new ResourceTemplate(RECENT_TURNS_URI, { list: () => listSessions(deps) }),
    {
      title: "A session's recent turns",
      description: "The short-term history of one session, oldest first, as JSON (the turns `retrieve` ranks with tier_priority 1).",
      mimeType: 'application/json',
    },
    async (uri, vars) => {
      try {
        const user = actingUser(deps.principal, parseOrThrow(UserIdSchema, uriVar(vars.user_id, 'user id'), 'user id'));
        const session = parseOrThrow(SessionIdSchema, uriVar(vars.session_id, 'session id'), 'session id');
        const turns = await deps.services.shortTerm.recent(user, session);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ user_id: user, session_id: session, turns }) }] };
      } catch (err) {
        if (!(err instanceof NeuralCleaveError)) throw err;
        // resource reads have no error result: a JSON-RPC error carrying our code
        throw new McpError(RpcErrorCode.InvalidParams, `${err.code}: ${err.message}`, { code: err.code });
      }
    },
  );
  return server;
}
