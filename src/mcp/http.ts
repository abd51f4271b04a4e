import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../api/auth.js';
import type { RouteContext } from '../api/context.js';
import { methodNotAllowed } from '../api/errors.js';
import type { RouteDoc } from '../api/openapi.js';
import { createMcpServer } from './server.js';

export const MCP_PATH = '/mcp';

/**
 * POST /mcp: MCP over Streamable HTTP, stateless — each request gets its own server bound to the
 * principal of its API key (checked by `authenticate` before this router), so no session outlives the
 * key that opened it and one connection can never act for another key's users. GET (a server-initiated
 * event stream) and DELETE (ending a session) have nothing to do without sessions: 405.
 */
export function mcpRouter(ctx: RouteContext): Router {
  const router = Router();
  const log = ctx.services.log.child({ component: 'mcp' });
  router
    .route(MCP_PATH)
    .post(async (req, res) => {
      const server = createMcpServer({ memory: ctx.memory, services: ctx.services, principal: principalOf(res), schemas: ctx.schemas, log });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    })
    .all(methodNotAllowed('POST'));
  return router;
}

export function mcpDocs(): RouteDoc[] {
  return [
    {
      method: 'post',
      path: MCP_PATH,
      summary: 'the Model Context Protocol over Streamable HTTP (stateless): tools add_turns, retrieve, search_memory, get_memory, update_memory, delete_memory, forget_session',
      description:
        'JSON-RPC 2.0 messages of MCP (initialize, tools/list, tools/call, resources/read); send `Accept: application/json, text/event-stream`. ' +
        "The API key's users bound every tool: tool arguments cannot name another user.",
      body: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string() }),
      responses: { 200: { description: 'the JSON-RPC response', schema: z.looseObject({ jsonrpc: z.literal('2.0') }) } },
    },
  ];
}
