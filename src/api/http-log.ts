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

/**
 * The route template a request path matches ("/memory/:id"), from the documented routes; null for a
 * path no route has (404s, static files), which is then not logged at all. Fixed paths are tried
 * before templates with parameters, as the routers do (/memory/search is never /memory/:id).
 */
export function routeMatcher(templates: readonly string[]): (url: string | undefined) => string | null {
  const ordered = [...new Set(templates)].sort((a, b) => (a.match(/:/g)?.length ?? 0) - (b.match(/:/g)?.length ?? 0));
  const escape = (t: string) => t.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  const compiled = ordered.map((t) => ({ t, re: new RegExp('^' + escape(t).replace(/:\w+/g, '[^/]+') + '/?$') }));
  return (url) => {
    const path = (url ?? '').split('?')[0]!;
    return compiled.find((c) => c.re.test(path))?.t ?? null;
  };
}

/**
 * One log line per request, without headers: the `Authorization` header (an API key) and cookies are
 * never logged, nor the URL (only the route template and the status). The serializer drops all
 * headers; the redaction is a second guard should anything put them back.
 */
export function httpLogger(log: Logger, routes: readonly string[]) {
  const routeOf = routeMatcher(routes);
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
      req: (r: { id: unknown; method: string; url: string }) => ({ id: r.id, method: r.method, route: routeOf(r.url) }),
      res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }),
    },
  });
}

/** what `httpLogger` logs with (its serializers and redaction): the plain node:http routes log through it too */
export type HttpLog = ReturnType<typeof httpLogger>['logger'];

/** a request id, set as X-Request-Id (as `httpLogger` does for the Express routes) */
export const requestId = genReqId;

/**
 * The line `httpLogger` writes when a response ends, for a request answered outside Express
 * (src/api/hot-routes.ts): same level, message and fields (route template, status, response time,
 * error code), and no logger object is made unless the line is written — pino-http makes a child
 * logger per request up front, which is most of its cost when info lines are off.
 */
export function logRequestLine(logger: HttpLog, req: IncomingMessage, res: ServerResponse, responseTime: number, errorCode?: string): void {
  const failed = res.statusCode >= 500;
  if (!logger.isLevelEnabled(failed ? 'error' : 'info')) return;
  let log = logger.child({ req });
  if (errorCode) log = log.child({ error_code: errorCode });
  if (failed) log.error({ res, err: new Error('failed with status code ' + res.statusCode), responseTime }, 'request errored');
  // as pino-http's: a client gone before the answer is "request aborted"
  else log.info({ res, responseTime }, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
}
