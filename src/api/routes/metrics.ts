import { Router } from 'express';
import { z } from 'zod';
import { NeuralCleaveError } from '../../errors.js';
import { isAdmin, principalOf } from '../auth.js';
import type { RouteContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';

/** GET /metrics — Prometheus text format, from the app's own registry. */
export function metricsRouter(ctx: RouteContext): Router {
  const router = Router();
  router
    .route('/metrics')
    .get(async (_req, res) => {
      // every tenant's request counts and the queues' depths: for operators, not for one user's key
      if (!isAdmin(principalOf(res))) throw new NeuralCleaveError('forbidden', 'the metrics need an admin key (users ["*"])');
      const { contentType, text } = await ctx.metrics.render();
      res.setHeader('Content-Type', contentType);
      res.send(text);
    })
    .all(methodNotAllowed('GET'));
  return router;
}

export function metricsDocs(): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      description:
        'Request latency by route, retrieval latency by tier, queue depths, turn-log backlog, job durations and failures ' +
        '(jobs run in this process), backend fallback and up states, process metrics. All names start with `neuralcleave_`. ' +
        'With api_keys configured, an admin key (users ["*"]) is required.',
      responses: { 200: { description: 'Prometheus text exposition format', schema: z.string(), contentType: 'text/plain; version=0.0.4' } },
      errors: ['forbidden'],
    },
  ];
}
