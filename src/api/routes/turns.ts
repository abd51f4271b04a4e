import { Router } from 'express';
import { ValidationError, type ErrorDetail } from '../../errors.js';
import type { AddTurnsResult } from '../../memory/write-path.js';
import { assertMayTouch, defaultUserOf, principalOf, type Principal } from '../auth.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import type { ApiSchemas } from '../schemas.js';
import { isPlainObject, parseRequest } from '../validate.js';

export const TURNS_PATH = '/sessions/:session_id/turns';
const PATH = TURNS_PATH;

/**
 * Gives each turn the path's session and, when it names no user, the batch's user (`{user_id, turns}`,
 * as MCP add_turns takes it), else the principal's default user. A turn naming another session than
 * the path, or another user than its batch, is refused (400) rather than silently moved.
 */
function bindToSession(raws: readonly unknown[], sessionId: string, defaultUser: string, prefix: string | undefined, batchUser?: string): unknown[] {
  const details: ErrorDetail[] = [];
  const at = (i: number, field: string) => `${prefix !== undefined ? `${prefix}.${i}.` : ''}${field}`;
  const bound = raws.map((raw, i) => {
    if (!isPlainObject(raw)) return raw; // the write path names the problem
    if (Object.hasOwn(raw, 'session_id') && raw.session_id !== sessionId) {
      details.push({ path: at(i, 'session_id'), message: `must be "${sessionId}", the session in the path, or be left out` });
    }
    if (batchUser !== undefined && Object.hasOwn(raw, 'user_id') && raw.user_id !== batchUser) {
      details.push({ path: at(i, 'user_id'), message: `must be "${batchUser}", the batch's user_id, or be left out` });
    }
    return { ...raw, session_id: sessionId, ...(Object.hasOwn(raw, 'user_id') ? {} : { user_id: batchUser ?? defaultUser }) };
  });
  if (details.length > 0) throw new ValidationError('a turn names another session than the path, or another user than its batch', details);
  return bound;
}

/**
 * The route's work once the body is parsed: shared by the Express route and the plain node:http route
 * in front of it (src/api/hot-routes.ts), so both answer alike. `params` are the path's (decoded).
 */
export async function addTurns(ctx: RouteContext, principal: Principal, params: unknown, body: unknown): Promise<AddTurnsResult> {
  const { session_id } = parseRequest(ctx.schemas.SessionParams, params, 'path');
  if (!isPlainObject(body)) {
    if (body === undefined) parseRequest(ctx.schemas.AddTurnsBody, body, 'body'); // "a JSON body is required"
    throw new ValidationError('the body must be one turn object or {"turns": [...]}', [{ path: '(root)', message: 'expected an object' }]);
  }
  const batch = Object.hasOwn(body, 'turns');
  const envelope = batch ? parseRequest(ctx.schemas.TurnBatchEnvelope, body, 'body') : null;
  const raws = envelope ? envelope.turns : [body];
  const prefix = batch ? 'turns' : undefined;
  const turns = bindToSession(raws, session_id, defaultUserOf(principal), prefix, envelope?.user_id);
  // every named user is checked before anything is written: all of the write, or none of it
  for (const t of turns) if (isPlainObject(t) && typeof t.user_id === 'string') assertMayTouch(principal, t.user_id);
  return ctx.services.writePath.addTurns(turns, prefix);
}

/** POST /sessions/:session_id/turns — through the same write path as the CLI; 202 once durable. */
export function turnsRouter(ctx: RouteContext): Router {
  const router = Router();
  router
    .route(PATH)
    .post(async (req, res) => {
      res.status(202).json(await addTurns(ctx, principalOf(res), req.params, req.body));
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
        '(of a turn, or of the batch for its turns that name none) defaults to the key\'s only user, else "default". Ids are the user\'s own (two users may use the same id). An id the user already ' +
        'holds, re-sent unchanged, is a duplicate (stored once); with other content it is 409 `content_conflict` naming the id, and nothing ' +
        'of the write is stored. Equal text under a new id is a memory of its own.',
      params: s.SessionParams,
      body: s.AddTurnsBody,
      responses: { 202: { description: 'durable; the ids in the order sent', schema: s.AddTurnsResponse } },
      errors: ['forbidden', 'content_conflict'],
    },
  ];
}
