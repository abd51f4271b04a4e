import { Router } from 'express';
import { assertMayTouch, principalOf } from '../auth.js';
import { whileClientWaits } from '../client-gone.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import type { ApiSchemas } from '../schemas.js';
import { parseRequest, withDefaultUser } from '../validate.js';

/**
 * POST /chat (docs/architecture.md, chat): retrieve → prompt blocks → LLM → reply → both turns written → compaction
 * check. 503 `llm_unavailable` when no LLM is configured or reachable (nothing is written then); a
 * client that goes away stops the retrieval pass, and the LLM is then not asked (or its call is cancelled).
 */
export function chatRouter(ctx: RouteContext): Router {
  const { ChatBody } = ctx.schemas;
  const router = Router();
  router
    .route('/chat')
    .post(async (req, res) => {
      const principal = principalOf(res);
      const body = parseRequest(ChatBody, withDefaultUser(req.body, principal), 'body');
      assertMayTouch(principal, body.user_id);
      res.json(await ctx.services.chat.chat(body, { signal: whileClientWaits(res) }));
    })
    .all(methodNotAllowed('POST'));
  return router;
}

export function chatDocs(s: ApiSchemas): RouteDoc[] {
  return [
    {
      method: 'post',
      path: '/chat',
      summary: 'one chat turn with memory: retrieve, ask the LLM, store both turns',
      description:
        'Retrieves the memories relevant to `message` (top_k 8), sends the system prompt with those memory blocks, the session\'s recent ' +
        'turns and the message to the configured LLM (the local Ollama in privacy mode), and writes the message and the reply to the ' +
        'session. When the session then exceeds compaction_threshold × context_window a compaction is queued, after the answer. ' +
        '503 when no LLM is configured or reachable; nothing is written then.',
      body: s.ChatBody,
      responses: { 200: { description: 'the reply and the memories it drew on', schema: s.ChatResponse } },
      errors: ['forbidden', 'llm_unavailable'],
    },
  ];
}
