import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';

/** Request ids are ours (a client-sent id could be forged into the log); sent back as X-Request-Id. */
function genReqId(_req: IncomingMessage, res: ServerResponse): string {
  const id = randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** The matched route's template; requests no route matched (404, static files) log no path at all. */
function routeOf(req: IncomingMessage | undefined): string | null {
  const r = req as (IncomingMessage & { route?: { path?: unknown }; baseUrl?: string }) | undefined;
  return typeof r?.route?.path === 'string' ? `${r.baseUrl ?? ''}${r.route.path}` : null;
}

/**
 * One log line per request, without headers: the `Authorization` header (an API key) and cookies are
 * never logged, nor the URL (only the route template and the status). The serializer drops all
 * headers; the redaction is a second guard should anything put them back.
 */
export function httpLogger(log: Logger) {
  return pinoHttp({
    logger: log.child({ component: 'http' }, { redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'authorization'], censor: '[redacted]' } }),
    genReqId,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customProps: (_req, res) => {
      const code = (res as ServerResponse & { locals?: { errorCode?: string } }).locals?.errorCode;
      return code ? { error_code: code } : {};
    },
    serializers: {
      // the route template ("/memory/:id"), never the URL: paths and query strings carry session ids,
      // memory ids, search words and keys sent by mistake (?api_key=), which must not outlive an erasure
      req: (r: { id: unknown; method: string; raw?: IncomingMessage }) => ({ id: r.id, method: r.method, route: routeOf(r.raw) }),
      res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }),
    },
  });
}
