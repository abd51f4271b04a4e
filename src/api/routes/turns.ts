import { Router } from 'express';
import { ValidationError, type ErrorDetail } from '../../errors.js';
import { assertMayTouch, defaultUserOf, principalOf } from '../auth.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import type { ApiSchemas } from '../schemas.js';
import { isPlainObject, parseRequest } from '../validate.js';

const PATH = '/sessions/:session_id/turns';

/**
 * Gives each turn the path's session and, when it names no user, the principal's default user. A turn
 * naming another session is refused (400) rather than silently moved.
 */
function bindToSession(raws: readonly unknown[], sessionId: string, defaultUser: string, prefix: string | undefined): unknown[] {
  const details: ErrorDetail[] = [];
  const bound = raws.map((raw, i) => {
    if (!isPlainObject(raw)) return raw; // the write path names the problem
    if (Object.hasOwn(raw, 'session_id') && raw.session_id !== sessionId) {
      details.push({ path: `${prefix !== undefined ? `${prefix}.${i}.` : ''}session_id`, message: `must be "${sessionId}", the session in the path, or be left out` });
    }
    return { ...raw, session_id: sessionId, ...(Object.hasOwn(raw, 'user_id') ? {} : { user_id: defaultUser }) };
  });
  if (details.length > 0) throw new ValidationError('a turn names another session than the path', details);
  return bound;
}

/** POST /sessions/:session_id/turns — through the same write path as the CLI; 202 once durable. */
export function turnsRouter(ctx: RouteContext): Router {
  const router = Router();
  router
    .route(PATH)
    .post(async (req, res) => {
      const { session_id } = parseRequest(ctx.schemas.SessionParams, req.params, 'path');
      const principal = principalOf(res);
      const body: unknown = req.body;
      if (!isPlainObject(body)) {
        if (body === undefined) parseRequest(ctx.schemas.AddTurnsBody, body, 'body'); // "a JSON body is required"
        throw new ValidationError('the body must be one turn object or {"turns": [...]}', [{ path: '(root)', message: 'expected an object' }]);
      }
      const batch = Object.hasOwn(body, 'turns');
      const raws = batch ? parseRequest(ctx.schemas.TurnBatchEnvelope, body, 'body').turns : [body];
      const prefix = batch ? 'turns' : undefined;
      const turns = bindToSession(raws, session_id, defaultUserOf(principal), prefix);
      // every named user is checked before anything is written: all of the write, or none of it
      for (const t of turns) if (isPlainObject(t) && typeof t.user_id === 'string') assertMayTouch(principal, t.user_id);
      const result = await ctx.services.writePath.addTurns(turns, prefix);
      res.status(202).json(result);
    })
    .all(methodNotAllowed('POST'));
  return router;
}

export function turnsDocs(s: ApiSchemas): RouteDoc[] {
  return [
    {
      method: 'post',
      path: PATH,
      summary: 'write one turn, or {turns: [...]} (at most 1,000)',
      description:
        'Validated as a whole (nothing is stored when one turn is invalid), recorded in the durable turn log, written to the short-term tier ' +
        'and enqueued for embedding and persistence. Answers 202 once the turns are durable. `session_id` comes from the path; `user_id` ' +
        'defaults to the key\'s only user, else "default". Ids are the user\'s own (two users may use the same id). An id the user already ' +
        'holds, re-sent unchanged, is a duplicate (stored once); with other content it is 409 `content_conflict` naming the id, and nothing ' +
        'of the write is stored. Equal text under a new id is a memory of its own.',
      params: s.SessionParams,
      body: s.AddTurnsBody,
      responses: { 202: { description: 'durable; the ids in the order sent', schema: s.AddTurnsResponse } },
      errors: ['forbidden', 'content_conflict'],
    },
  ];
}
