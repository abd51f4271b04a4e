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
 * One log line per request, without headers: the `Authorization` header (an API key) and cookies are
 * never logged. The serializer drops all headers; the redaction is a second guard should anything put
 * them back.
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
      req: (r: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({ id: r.id, method: r.method, url: r.url, remoteAddress: r.remoteAddress }),
      res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }),
    },
  });
}
