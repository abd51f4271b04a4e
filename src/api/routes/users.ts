import { Router } from 'express';
import { z } from 'zod';
import { SessionIdSchema, UserIdSchema } from '../../domain/turn.js';
import { completedErasure, ErasureReportSchema } from '../../memory/forget.js';
import { assertMayTouch, principalOf } from '../auth.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import { parseRequest } from '../validate.js';

const UserParams = z.strictObject({ user_id: UserIdSchema });
const SessionParams = z.strictObject({ user_id: UserIdSchema, session_id: SessionIdSchema });

/**
 * The answer of an erasure route: the report once every tier of this process (and every process
 * sharing the file that holds state of its own) has dropped the data; 404 when there was nothing to
 * erase; 503 with what failed when something could not be erased.
 */
/**
 * DELETE /users/:user_id (forget a user) and DELETE /users/:user_id/sessions/:session_id (clear a
 * session): the same erasure as `memory forget` and `memory clear`, run in the serving process, for
 * the user's own key or an admin key (users ["*"]).
 */
export function usersRouter(ctx: RouteContext): Router {
  const router = Router();
  router
    .route('/users/:user_id')
    .delete(async (req, res) => {
      const { user_id } = parseRequest(UserParams, req.params, 'path');
      assertMayTouch(principalOf(res), user_id);
      res.json(completedErasure(await ctx.memory.forget(user_id), `user "${user_id}"`));
    })
    .all(methodNotAllowed('DELETE'));
  router
    .route('/users/:user_id/sessions/:session_id')
    .delete(async (req, res) => {
      const { user_id, session_id } = parseRequest(SessionParams, req.params, 'path');
      assertMayTouch(principalOf(res), user_id);
      res.json(completedErasure(await ctx.memory.clearSession(user_id, session_id), `session "${session_id}" of user "${user_id}"`));
    })
    .all(methodNotAllowed('DELETE'));
  return router;
}

export function usersDocs(): RouteDoc[] {
  const common = 'Answers once every tier has dropped the data — the short-term copy, vectors of every embedder, the long-term entries (pinned included), the turn log and queued jobs holding the text — in this process and in every process sharing its SQLite file that keeps state of its own. For the user\'s own key or an admin key (users ["*"]); 404 when nothing was stored; 503 `backend_unavailable` naming what could not be erased (run it again).';
  return [
    {
      method: 'delete',
      path: '/users/:user_id',
      summary: 'forget a user: erase everything held about them',
      description: `Entries, summaries, archives, vectors, short-term sessions, turn log and jobs. ${common}`,
      params: UserParams,
      responses: { 200: { description: 'what was erased, tier by tier', schema: ErasureReportSchema } },
      errors: ['forbidden', 'not_found', 'backend_unavailable'],
    },
    {
      method: 'delete',
      path: '/users/:user_id/sessions/:session_id',
      summary: "clear one session of a user from every tier",
      description: common,
      params: SessionParams,
      responses: { 200: { description: 'what was erased, tier by tier', schema: ErasureReportSchema } },
      errors: ['forbidden', 'not_found', 'backend_unavailable'],
    },
  ];
}
