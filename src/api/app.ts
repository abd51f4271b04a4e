import type { RequestListener } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import type { Memory } from '../memory/memory.js';
import { authenticate, KeyTable } from './auth.js';
import type { ApiServices, RouteContext } from './context.js';
import { errorMiddleware, notFound } from './errors.js';
import { hotRoutes, type HotRoutesDeps } from './hot-routes.js';
import { httpLogger } from './http-log.js';
import { answering } from '../pace.js';
import { verifyUtf8 } from './body-encoding.js';
import { verifyDepth } from './json-depth.js';
import { createInspector } from './inspector.js';
import { ApiMetrics } from './metrics.js';
import { openApiDocument, type RouteDoc } from './openapi.js';
import { chatDocs, chatRouter } from './routes/chat.js';
import { healthDocs, healthRouter } from './routes/health.js';
import { memoryDocs, memoryRouter } from './routes/memory.js';
import { metricsDocs, metricsRouter } from './routes/metrics.js';
import { openapiDocs, openapiRouter } from './routes/openapi.js';
import { turnsDocs, turnsRouter } from './routes/turns.js';
import { usersDocs, usersRouter } from './routes/users.js';
import { apiSchemas } from './schemas.js';
import { NeuralCleaveError } from '../errors.js';
import { mcpDocs, mcpRouter } from '../mcp/http.js';

export interface ApiDeps {
  memory: Memory;
  services: ApiServices;
  /** process-level metrics (CPU, heap, event loop) on /metrics; default true */
  processMetrics?: boolean;
  /** the inspector page's built folder (null: no page); default dist/web of the package */
  webRoot?: string | null;
}

const JSON_TYPES = ['application/json', 'application/*+json'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A non-empty body in another format than JSON is refused (415) rather than read as "no body". */
function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && BODY_METHODS.has(req.method) && req.is(JSON_TYPES) === false) {
    next(new NeuralCleaveError('unsupported_media_type', `the body must be JSON (Content-Type: application/json), got ${req.headers['content-type'] ?? 'no Content-Type'}`));
    return;
  }
  next();
}

/** The API as a node:http request listener: the hot routes (src/api/hot-routes.ts) in front of `app`. */
export interface Api {
  app: Express;
  listener: RequestListener;
  /** detaches the app's metrics from the services (the API is being discarded) */
  close(): void;
}

/** Builds the API served by `serve`: the Express app, with the two hot routes on plain node:http in front of it. */
export function createApi(deps: ApiDeps): Api {
  const app = createApp(deps);
  const hot = app.locals.hot as Omit<HotRoutesDeps, 'fallback'>;
  const routes = hotRoutes({ ...hot, fallback: app });
  // long jobs of this process pause for requests being answered (src/pace.ts)
  const listener: RequestListener = (req, res) => {
    res.once('close', answering());
    routes(req, res);
  };
  return { app, listener, close: app.locals.close as () => void };
}

/**
 * Builds the HTTP API from its dependencies; nothing global, so tests build as many as they like.
 * `app.locals.close()` detaches the app's metrics from the services when the app is discarded.
 *
 * Order: request log and timing → GET /health (no key) → the inspector page and /admin/queues
 * (src/api/inspector.ts) → authentication → JSON body (capped) → the
 * routers → 404 → the one error middleware.
 */
export function createApp(deps: ApiDeps): Express {
  const { services, memory } = deps;
  const { config } = services;
  const schemas = apiSchemas(config);
  const keys = new KeyTable(config.api_keys);
  const metrics = new ApiMetrics(services, { processMetrics: deps.processMetrics ?? true });
  const ctx: RouteContext = { memory, services, schemas, keys, metrics };
  const inspector = createInspector(ctx, deps.webRoot === undefined ? {} : { webRoot: deps.webRoot });

  // one router per resource; each module also documents its routes for /openapi.json
  const routers: Array<{ router: Router; docs: RouteDoc[] }> = [
    { router: turnsRouter(ctx), docs: turnsDocs(schemas) },
    { router: memoryRouter(ctx), docs: memoryDocs(schemas) },
    { router: usersRouter(ctx), docs: usersDocs() },
    { router: chatRouter(ctx), docs: chatDocs(schemas) },
    { router: metricsRouter(ctx), docs: metricsDocs() },
    { router: mcpRouter(ctx), docs: mcpDocs() },
    { router: inspector.api, docs: inspector.docs },
  ];
  const docs = [...healthDocs(schemas), ...routers.flatMap((r) => r.docs), ...openapiDocs()];
  const document = openApiDocument(docs, schemas.ErrorResponse, { title: 'NeuralCleave memory', version: '0.1.0' });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.locals.close = () => {
    metrics.close();
    inspector.close();
  };

  const requestLog = httpLogger(services.log, docs.map((d) => d.path));
  const hot: Omit<HotRoutesDeps, 'fallback'> = { ctx, logger: requestLog.logger, maxBodyBytes: config.max_body_bytes };
  app.locals.hot = hot;
  app.use(requestLog);
  app.use(metrics.middleware());
  app.use(healthRouter(ctx));
  // the inspector page and the queue dashboard: no data in the page, the dashboard checks its own admin key
  app.use(inspector.pages);
  app.use(authenticate(keys));
  app.use(requireJsonBody);
  app.use(
    express.json({
      limit: config.max_body_bytes,
      type: JSON_TYPES,
      strict: true,
      verify: (req, res, buf, encoding) => {
        verifyUtf8(req, res, buf, encoding);
        verifyDepth(req, res, buf);
      },
    }),
  );
  for (const { router } of routers) app.use(router);
  app.use(openapiRouter(document));
  app.use(notFound);
  app.use(errorMiddleware(config.max_body_bytes));
  return app;
}
