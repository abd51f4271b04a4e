import { isUtf8 } from 'node:buffer';
import { IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { RequestAbortedError } from '../errors.js';
import type { Principal } from './auth.js';
import { CLIENT_LEFT, whileClientWaits } from './client-gone.js';
import type { RouteContext } from './context.js';
import { toHttpError } from './errors.js';
import { logRequestLine, requestId, type HttpLog } from './http-log.js';
import { exceedsDepth } from './json-depth.js';
import { addTurns, TURNS_PATH } from './routes/turns.js';
import { retrieve } from './routes/memory.js';

/**
 * The two routes every chat turn pays for — `POST /sessions/:session_id/turns` and
 * `POST /memory/retrieve` — answered on plain node:http in front of the Express app, which serves
 * everything else. Express's router, its req/res prototypes, body-parser's stream plumbing and
 * pino-http's per-request child logger cost more CPU than a single-turn write's own work.
 *
 * Same answers by construction: the route's work is the function the Express route calls (addTurns,
 * retrieve), errors go through the same `toHttpError`, the request log line and the latency metric are
 * the Express ones. Anything this layer is not sure to answer exactly as Express would is handed to
 * Express untouched: another method or path spelling, no or a bad key (401), a body that is empty,
 * chunked, compressed, over the size limit (413), not declared as UTF-8 JSON (415), or — after it is
 * read — not valid UTF-8, nested too deep, not an object or not parseable JSON; such a body is
 * replayed to Express, whose parser then answers its own error.
 */

interface Hot {
  route: string;
  status: number;
  /** `res`: the response, whose close before the answer stops a retrieval (see whileClientWaits) */
  run(ctx: RouteContext, principal: Principal, match: RegExpExecArray, body: unknown, res: ServerResponse): Promise<unknown>;
}

// lower-case literals only (Express matches any case: those requests go to Express); a session id with
// '%' needs decoding, which Express does
const TURNS = /^\/sessions\/([^/%?#]+)\/turns\/?(?:\?.*)?$/;
const RETRIEVE = /^\/memory\/retrieve\/?(?:\?.*)?$/;

const routes: Array<[RegExp, Hot]> = [
  [TURNS, { route: TURNS_PATH, status: 202, run: (ctx, p, m, body) => addTurns(ctx, p, { session_id: m[1] }, body) }],
  [RETRIEVE, { route: '/memory/retrieve', status: 200, run: (ctx, p, _m, body, res) => retrieve(ctx, p, body, whileClientWaits(res)) }],
];

/** `application/json`, alone or with a UTF-8 charset: what express.json reads as UTF-8 with no question */
const PLAIN_JSON = /^application\/json(?:[ \t]*;[ \t]*charset="?utf-8"?)?[ \t]*$/i;

/** A request with the same head and `body`, for Express once this layer has read the original's body. */
function replay(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(req.socket);
  copy.method = req.method!;
  copy.url = req.url!;
  copy.headers = req.headers;
  copy.rawHeaders = req.rawHeaders;
  copy.httpVersion = req.httpVersion;
  copy.httpVersionMajor = req.httpVersionMajor;
  copy.httpVersionMinor = req.httpVersionMinor;
  // complete: its whole body is here (an incomplete one, once read, is taken as aborted and destroys the socket)
  copy.complete = true;
  copy.push(body);
  copy.push(null);
  return copy;
}

function send(res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void {
  // as Express's res.json (no ETag: the app disables it)
  const text = JSON.stringify(value);
  res.statusCode = status;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export interface HotRoutesDeps {
  ctx: RouteContext;
  /** the Express app: everything this layer does not answer */
  fallback: RequestListener;
  /** the request log `httpLogger` writes with */
  logger: HttpLog;
  maxBodyBytes: number;
}

/** The server's request listener: the hot routes, else Express. */
export function hotRoutes(deps: HotRoutesDeps): RequestListener {
  const { ctx, fallback, logger, maxBodyBytes } = deps;

  const answer = async (req: IncomingMessage, res: ServerResponse, hot: Hot, match: RegExpExecArray, principal: Principal, body: unknown, started: number) => {
    const id = requestId(req, res);
    req.id = id;
    let errorCode: string | undefined;
    // as the Express side: the metric on 'finish' only, the log line on whichever of 'finish' and
    // 'close' (a client gone before the answer) comes first
    const done = (finished: boolean) => {
      res.removeListener('finish', onFinish);
      res.removeListener('close', onClose);
      const ms = performance.now() - started;
      if (finished) ctx.metrics.observeRequest('POST', hot.route, res.statusCode, ms / 1000);
      logRequestLine(logger, req, res, Math.round(ms), errorCode);
    };
    const onFinish = () => done(true);
    const onClose = () => done(false);
    res.on('finish', onFinish);
    res.on('close', onClose);
    try {
      send(res, hot.status, await hot.run(ctx, principal, match, body, res));
    } catch (err) {
      // the client left and the work stopped: nothing to answer, and no error (its request line is written)
      if (err instanceof RequestAbortedError && res.destroyed) {
        logger.child({ req }).debug(CLIENT_LEFT.fields, CLIENT_LEFT.message);
        return;
      }
      if (res.headersSent) {
        res.destroy(err as Error);
        return;
      }
      const mapped = toHttpError(err, { maxBodyBytes, requestId: id });
      if (mapped.unexpected) logger.child({ req }).error({ err }, 'unexpected error');
      errorCode = mapped.body.error.code;
      send(res, mapped.status, mapped.body, mapped.headers);
    }
  };

  return (req, res) => {
    const started = performance.now();
    const url = req.url ?? '';
    let hot: Hot | undefined;
    let match: RegExpExecArray | null = null;
    if (req.method === 'POST') {
      for (const [re, h] of routes) {
        match = re.exec(url);
        if (match) {
          hot = h;
          break;
        }
      }
    }
    const h = req.headers;
    const length = Number(h['content-length']);
    const principal = hot ? ctx.keys.identify(h.authorization) : null;
    if (
      !hot ||
      !match ||
      !principal ||
      h['transfer-encoding'] !== undefined ||
      h['content-encoding'] !== undefined ||
      !(length > 0 && length <= maxBodyBytes) ||
      !PLAIN_JSON.test(h['content-type'] ?? '')
    ) {
      fallback(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    // a client gone mid-body: nobody is left to answer
    req.on('error', () => res.destroy());
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      let body: unknown;
      // a body Express would refuse (or read differently, such as one opening with a BOM) goes to it
      if (buf[0] === 0x7b /* { */ && isUtf8(buf) && !exceedsDepth(buf)) {
        try {
          body = JSON.parse(buf.toString('utf8'));
        } catch {
          body = undefined;
        }
      }
      if (body === undefined) {
        fallback(replay(req, buf), res);
        return;
      }
      void answer(req, res, hot!, match!, principal, body, started);
    });
  };
}
