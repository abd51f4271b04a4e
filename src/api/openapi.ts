import { z } from 'zod';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  /** default application/json */
  contentType?: string;
}

/** What one route accepts and answers; each router module exports the docs of its routes. */
export interface RouteDoc {
  method: Method;
  /** Express form: /memory/:id */
  path: string;
  summary: string;
  description?: string;
  /** needs `Authorization: Bearer <key>` when api_keys are configured (default true) */
  auth?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Partial<Record<number, ResponseDoc>>;
  /** catalog codes this route answers besides the ones every route may (401, 400/413/415 with a body, 500) */
  errors?: ErrorCode[];
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(where: 'path' | 'query', schema: z.ZodObject | undefined): unknown[] {
  if (!schema) return [];
  return Object.entries(schema.shape).map(([name, field]) => {
    const s = field as z.ZodType;
    const js = jsonSchema(s, 'input');
    const { description, ...rest } = js;
    return {
      name,
      in: where,
      required: where === 'path' || !s.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const errorRef = (code: ErrorCode) => ({
  description: `${code}: ${ERROR_CATALOG[code].summary}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/**
 * The OpenAPI 3.1 document of the routes, generated from their zod schemas (JSON Schema 2020-12 is
 * OpenAPI 3.1's schema dialect). Built once per app.
 */
export function openApiDocument(routes: readonly RouteDoc[], errorSchema: z.ZodType, info: { title: string; version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    const auth = r.auth ?? true;
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) {
      if (!doc) continue;
      responses[status] = {
        description: doc.description,
        ...(doc.schema ? { content: { [doc.contentType ?? 'application/json']: { schema: jsonSchema(doc.schema, 'output') } } } : {}),
      };
    }
    const codes = new Set<ErrorCode>(r.errors ?? []);
    if (auth) codes.add('unauthorized');
    if (r.params || r.query) codes.add('bad_request');
    if (r.body) ['bad_request', 'payload_too_large', 'unsupported_media_type'].forEach((c) => codes.add(c as ErrorCode));
    codes.add('internal');
    for (const code of codes) {
      const status = String(ERROR_CATALOG[code].status);
      if (status in r.responses) continue;
      // several codes may share a status (409, 503): one entry per status, naming them all
      const prev = responses[status] as { description: string } | undefined;
      responses[status] = prev ? { ...prev, description: `${prev.description}; ${errorRef(code).description}` } : errorRef(code);
    }
    (paths[path] ??= {})[r.method] = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(auth ? {} : { security: [] }),
      parameters: [...parameters('path', r.params), ...parameters('query', r.query)],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description: 'NeuralCleave memory HTTP API. Errors are `{error: {code, message, details?}}`; `code` is one of a stable catalog.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'one of the configured api_keys (unneeded when none is configured)' } },
      schemas: { Error: jsonSchema(errorSchema, 'output') },
    },
    paths,
  };
}
