import { Router, type Response } from 'express';
import type { RetrieveResponse } from '../../retrieval/retrieve.js';
import { actingUser, ownedEntry } from '../access.js';
import { whileClientWaits } from '../client-gone.js';
import { assertMayTouch, boundToOneUser, principalOf, type Principal } from '../auth.js';
import { ValidationError } from '../../errors.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import { DEFAULT_LIMIT, type ApiSchemas } from '../schemas.js';
import { isPlainObject, parseRequest, withDefaultUser } from '../validate.js';

/** The user a route acts for (see actingUser): ids are that user's own. */
const userFor = (res: Response, named: string | undefined): string => actingUser(principalOf(res), named);

/**
 * POST /memory/retrieve once the body is parsed: shared with the plain node:http route (src/api/hot-routes.ts).
 * `signal`: the client left (whileClientWaits); the pass then stops and rejects with a RequestAbortedError.
 */
export async function retrieve(ctx: RouteContext, principal: Principal, raw: unknown, signal?: AbortSignal): Promise<RetrieveResponse> {
  const body = parseRequest(ctx.schemas.RetrieveBody, withDefaultUser(raw, principal), 'body');
  assertMayTouch(principal, body.user_id);
  return ctx.memory.retrieve(body, signal ? { signal } : {});
}

/** /memory/*: search, recent, retrieve, prune, and one entry by id (read, edit, delete). */
export function memoryRouter(ctx: RouteContext): Router {
  const { memory, schemas: s } = ctx;
  const router = Router();

  // the fixed paths first, so that /memory/search is never read as /memory/:id
  router
    .route('/memory/search')
    .get(async (req, res) => {
      const q = parseRequest(s.SearchQuery, req.query, 'query string');
      const user_id = userFor(res, q.user_id);
      const entries = await memory.search(q.q, { user_id, limit: q.limit ?? DEFAULT_LIMIT, ...(q.session_id ? { session_id: q.session_id } : {}) });
      res.json({ entries });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/memory/recent')
    .get(async (req, res) => {
      const q = parseRequest(s.RecentQuery, req.query, 'query string');
      const user_id = userFor(res, q.user_id);
      const entries = await memory.recent({ user_id, limit: q.limit ?? DEFAULT_LIMIT, ...(q.session_id ? { session_id: q.session_id } : {}) });
      res.json({ entries });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/memory/retrieve')
    .post(async (req, res) => {
      res.json(await retrieve(ctx, principalOf(res), req.body, whileClientWaits(res)));
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/memory/prune')
    .post(async (req, res) => {
      const principal = principalOf(res);
      const body = parseRequest(s.PruneBody, withDefaultUser(req.body, principal), 'body');
      // a destructive call acts on the user it names: only a key bound to one user names its user by itself
      // (with no keys, or an admin key, a missing user_id would silently prune "default")
      if (!(isPlainObject(req.body) && Object.hasOwn(req.body, 'user_id')) && !boundToOneUser(principal)) {
        throw new ValidationError('prune needs user_id', [{ path: 'user_id', message: 'required: the user whose memories to prune (a key bound to one user may leave it out)' }]);
      }
      const userId = body.user_id!; // filled by withDefaultUser when absent
      assertMayTouch(principal, userId);
      const refs = await memory.prune({
        userId,
        ...(body.session_id !== undefined ? { sessionId: body.session_id } : {}),
        ...(body.older_than_days !== undefined ? { olderThanDays: body.older_than_days } : {}),
        ...(body.below_importance !== undefined ? { belowImportance: body.below_importance } : {}),
      });
      res.json({ deleted: refs.length, ids: refs.map((r) => r.id) });
    })
    .all(methodNotAllowed('POST'));

  router
    .route('/memory/:id')
    .get(async (req, res) => {
      const { id } = parseRequest(s.MemoryIdParams, req.params, 'path');
      const { user_id } = parseRequest(s.MemoryIdQuery, req.query, 'query string');
      res.json(await ownedEntry(memory, principalOf(res), user_id, id));
    })
    .patch(async (req, res) => {
      const { id } = parseRequest(s.MemoryIdParams, req.params, 'path');
      const user = userFor(res, parseRequest(s.MemoryIdQuery, req.query, 'query string').user_id);
      const patch = parseRequest(s.PatchBody, req.body, 'body');
      res.json(await memory.edit(user, id, patch));
    })
    .delete(async (req, res) => {
      const { id } = parseRequest(s.MemoryIdParams, req.params, 'path');
      const user = userFor(res, parseRequest(s.MemoryIdQuery, req.query, 'query string').user_id);
      res.json(await memory.delete(user, id));
    })
    .all(methodNotAllowed('GET', 'PATCH', 'DELETE'));

  return router;
}

export function memoryDocs(s: ApiSchemas): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/memory/search',
      summary: 'long-term substring search',
      description: 'Matches content and participant name with LIKE; `%`, `_` and `\\` in `q` match themselves. Newest first.',
      query: s.SearchQuery,
      responses: { 200: { description: 'matching entries', schema: s.EntriesResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'get',
      path: '/memory/recent',
      summary: 'most recent long-term entries',
      query: s.RecentQuery,
      responses: { 200: { description: 'entries, newest first', schema: s.EntriesResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'post',
      path: '/memory/retrieve',
      summary: 'the three-tier retrieval pass and its prompt blocks',
      description: 'Reads short-term, semantic and long-term tiers concurrently, each under its time budget; `tiers` reports each tier.',
      body: s.RetrieveBody,
      responses: { 200: { description: 'ranked results, prompt blocks and per-tier reports', schema: s.RetrieveResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'post',
      path: '/memory/prune',
      summary: "delete one user's unpinned memories by age, importance and/or session, from every tier",
      description:
        'At least one criterion is required; criteria combine with AND. Matching long-term entries and logged turns go with their ' +
        'short-term copies and vectors (nothing pruned comes back, not even after `memory reindex --force`). Pinned memories are never pruned. Always scoped to one user, ' +
        'which the body names (`user_id`): leaving it out is a 400, except with a key bound to one user, which names its user.',
      body: s.PruneBody,
      responses: { 200: { description: 'the deleted ids', schema: s.PruneResponse } },
      errors: ['forbidden'],
    },
    {
      method: 'get',
      path: '/memory/:id',
      summary: 'one memory, as retrieve can return it',
      description:
        "The memory of the user named (`user_id`, default: the key's only user, else \"default\") with this id: ids are per user. Its long-term entry, else its logged turn (a turn under the importance threshold, or not persisted yet). 403 for a user the key may not touch, whatever the id.",
      params: s.MemoryIdParams,
      query: s.MemoryIdQuery,
      responses: { 200: { description: 'the entry', schema: s.EntryResponse } },
      errors: ['not_found', 'forbidden'],
    },
    {
      method: 'patch',
      path: '/memory/:id',
      summary: 'edit content, importance and/or pinned; a new content is re-embedded',
      description: "The memory of the user named (`user_id`, default: the key's only user, else \"default\") with this id: ids are per user. 403 for a user the key may not touch, whatever the id.",
      params: s.MemoryIdParams,
      query: s.MemoryIdQuery,
      body: s.PatchBody,
      responses: { 200: { description: 'the updated entry', schema: s.EntryResponse } },
      errors: ['not_found', 'forbidden'],
    },
    {
      method: 'delete',
      path: '/memory/:id',
      summary: 'delete a memory from every tier that holds it',
      description: "The memory of the user named (`user_id`, default: the key's only user, else \"default\") with this id: ids are per user. 403 for a user the key may not touch, whatever the id.",
      params: s.MemoryIdParams,
      query: s.MemoryIdQuery,
      responses: { 200: { description: 'which tiers held it', schema: s.DeleteResponse } },
      errors: ['not_found', 'forbidden'],
    },
  ];
}
