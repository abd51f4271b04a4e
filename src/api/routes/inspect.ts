import { Router, type Response } from 'express';
import { assertMayTouch, defaultUserOf, isAdmin, mayTouch, principalOf } from '../auth.js';
import type { RouteContext } from '../context.js';
import { DEFAULT_JOBS, DEFAULT_LIMIT, inspectSchemas, type InspectSchemas } from '../inspect-schemas.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import { BOARD_PATH, type QueueBoard } from '../queue-board.js';
import { parseRequest } from '../validate.js';

/** The user a route reads: the one named, else the principal's default; 403 when not the key's. */
function userFor(res: Response, named: string | undefined): string {
  const p = principalOf(res);
  const user = named ?? defaultUserOf(p);
  assertMayTouch(p, user);
  return user;
}

/**
 * /inspect/*: what the memory inspector (the page at /) reads besides the /memory routes — who the key
 * is, the users and sessions it may see, where each memory of a session is held, failed jobs — and the
 * door to the queue dashboard. Read-only; every edit goes through the /memory routes.
 */
export function inspectRouter(ctx: RouteContext, board: QueueBoard, s: InspectSchemas = inspectSchemas()): Router {
  const { memory, services } = ctx;
  const router = Router();

  router
    .route('/inspect/whoami')
    .get((_req, res) => {
      const p = principalOf(res);
      const admin = isAdmin(p);
      res.json({
        admin,
        keys_enabled: ctx.keys.enabled,
        users: p.kind === 'key' && p.users !== 'all' ? [...p.users].sort() : null,
        default_user: defaultUserOf(p),
        queue_backend: services.queue.backend,
        queue_board: admin && board.enabled ? `${BOARD_PATH}/` : null,
      });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/inspect/users')
    .get(async (req, res) => {
      const q = parseRequest(s.UsersQuery, req.query, 'query string');
      const p = principalOf(res);
      const all = isAdmin(p);
      const scope = all || p.kind !== 'key' || p.users === 'all' ? ({ all: true } as const) : ({ all: false, users: [...p.users].sort() } as const);
      res.json({ users: await memory.users(scope, q.limit ?? DEFAULT_LIMIT), all });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/inspect/sessions')
    .get(async (req, res) => {
      const q = parseRequest(s.SessionsQuery, req.query, 'query string');
      const user_id = userFor(res, q.user_id);
      res.json({ user_id, sessions: await memory.sessions(user_id, q.limit ?? DEFAULT_LIMIT) });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/inspect/sessions/:session_id/entries')
    .get(async (req, res) => {
      const { session_id } = parseRequest(s.SessionParams, req.params, 'path');
      const q = parseRequest(s.SessionEntriesQuery, req.query, 'query string');
      const user_id = userFor(res, q.user_id);
      res.json({ user_id, session_id, entries: await memory.sessionEntries(user_id, session_id, q.limit ?? DEFAULT_LIMIT) });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/inspect/jobs/failed')
    .get(async (req, res) => {
      const q = parseRequest(s.FailedJobsQuery, req.query, 'query string');
      const p = principalOf(res);
      const jobs = await memory.failedJobs(q.queue, q.limit ?? DEFAULT_JOBS);
      // a job that concerns no one user (archive) is shown to admins only
      const visible = isAdmin(p) ? jobs : jobs.filter((j) => j.user_id !== null && mayTouch(p, j.user_id));
      res.json({ queue_backend: services.queue.backend, jobs: visible });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/inspect/queue-board/session')
    .post((req, res) => {
      const cookie = board.openSession(req, principalOf(res));
      if (cookie) res.setHeader('Set-Cookie', cookie);
      res.json({ path: `${BOARD_PATH}/` });
    })
    .all(methodNotAllowed('POST'));

  return router;
}

export function inspectDocs(s: InspectSchemas = inspectSchemas()): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/inspect/whoami',
      summary: 'what the presented key may see (the inspector page starts here)',
      responses: { 200: { description: "the key's scope", schema: s.WhoAmIResponse } },
    },
    {
      method: 'get',
      path: '/inspect/users',
      summary: 'users with stored memories and their counts',
      description: "An admin key (or no keys configured) lists every user; a key bound to users lists those users only, including ones that hold nothing yet.",
      query: s.UsersQuery,
      responses: { 200: { description: 'users, most recently active first', schema: s.UsersResponse } },
    },
    {
      method: 'get',
      path: '/inspect/sessions',
      summary: "a user's sessions with their counts",
      query: s.SessionsQuery,
      responses: { 200: { description: 'sessions, most recently active first', schema: s.SessionsResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'get',
      path: '/inspect/sessions/:session_id/entries',
      summary: "the newest memories of one session with kind, importance, pinned state and the tiers holding each",
      params: s.SessionParams,
      query: s.SessionEntriesQuery,
      responses: { 200: { description: 'memories, oldest first', schema: s.SessionEntriesResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'get',
      path: '/inspect/jobs/failed',
      summary: 'failed queue jobs, newest first per queue',
      description: "A key bound to users sees the failed jobs of those users only; jobs of no one user (archive) are shown to admin keys.",
      query: s.FailedJobsQuery,
      responses: { 200: { description: 'failed jobs with the user each concerns', schema: s.FailedJobsResponse } },
    },
    {
      method: 'post',
      path: '/inspect/queue-board/session',
      summary: 'open the queue dashboard at /admin/queues/ in this browser (admin keys, Redis only)',
      description:
        'Sets a short-lived HttpOnly cookie scoped to /admin/queues holding a random token (never the key), so the dashboard page, ' +
        'which cannot send the Authorization header, is let in. 404 when the queue is in-process.',
      responses: { 200: { description: 'where the dashboard is', schema: s.BoardSessionResponse } },
      errors: ['forbidden', 'not_found'],
    },
  ];
}
