import { Router } from 'express';
import { healthReport, publicHealth } from '../../health.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';
import type { ApiSchemas } from '../schemas.js';

/**
 * GET /health — the one route that needs no key (load balancers and probes call it). Without a valid
 * key it answers states and depths only; with one (or with no keys configured) the full report.
 * 503 when writes cannot be made durable.
 */
export function healthRouter(ctx: RouteContext): Router {
  const router = Router();
  router
    .route('/health')
    .get(async (req, res) => {
      const full = ctx.keys.identify(req.headers.authorization) !== null;
      const report = await healthReport(ctx.services, { turnLogCounts: full });
      res.status(report.status === 'down' ? 503 : 200).json(full ? report : publicHealth(report));
    })
    .all(methodNotAllowed('GET'));
  return router;
}

export function healthDocs(s: ApiSchemas): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/health',
      summary: "liveness, each tier's backend and state, queue depths, the embedder",
      description: 'Needs no key. With a valid key (or none configured) it adds where the durable store is (the SQLite path, or the database URL with its password masked), error details and the turn-log backlog.',
      auth: false,
      responses: {
        200: { description: 'ok or degraded (a part on a fallback, loading or down; writes still work)', schema: s.HealthResponse },
        503: { description: 'down: the durable store (the SQLite file or the PostgreSQL database) does not answer, writes cannot be made durable', schema: s.HealthResponse },
      },
    },
  ];
}
