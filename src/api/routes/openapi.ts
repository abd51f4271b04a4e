import { Router } from 'express';
import { z } from 'zod';
import { methodNotAllowed } from '../errors.js';
import type { RouteDoc } from '../openapi.js';

/** GET /openapi.json — the document generated once, at app construction, from the routes' schemas. */
export function openapiRouter(document: Record<string, unknown>): Router {
  const router = Router();
  const body = JSON.stringify(document);
  router
    .route('/openapi.json')
    .get((_req, res) => {
      res.type('application/json').send(body);
    })
    .all(methodNotAllowed('GET'));
  return router;
}

export function openapiDocs(): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/openapi.json',
      summary: 'this document (OpenAPI 3.1), generated from the zod schemas the routes validate with',
      responses: { 200: { description: 'the OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    },
  ];
}
