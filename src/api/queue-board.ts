import { timingSafeEqual } from 'node:crypto';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { JobQueue } from '../../queues/queue.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { bullBoard } from '../adapters/bullmq/board.js';
import { NeuralCleaveError, UnauthorizedError } from '../errors.js';
import type { QueueDashboard } from '../ports/queue-dashboard.js';
import { isAdmin, type KeyTable, type Principal } from './auth.js';

export const BOARD_PATH = '/admin/queues';
const COOKIE = 'nc_board';
/** how long a dashboard session opened from the inspector lasts */
const SESSION_MS = 60 * 60 * 1000;

/**
 * The browser is told to load nothing from another host; bull-board's scripts and styles are its own
 * files (it styles inline). Its page template links a Google font, which is also cut from the page
 * (`withoutRemoteLinks`), so the browser does not even try.
 */
const BOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "object-src 'none'",
].join('; ');

const REMOTE_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>/gi;

/** Drops `<link>`s to other hosts from the dashboard's HTML (its font); local assets stay. */
export function withoutRemoteLinks(html: string): string {
  return html.replace(REMOTE_LINK, '');
}


function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The BullMQ dashboard (@bull-board/express) at /admin/queues, for admin keys only (users ["*"], or
 * no api_keys configured). Present only when the queue runs on Redis; with the in-process queue the
 * path answers 404 saying so (the inspector shows depths and failed jobs from /health and /inspect).
 *
 * Authentication: the dashboard is a page whose own scripts call its API, so they cannot send the
 * `Authorization` header a user typed into the inspector. A request is let in with that header (curl,
 * scripts) or with a short-lived cookie the inspector obtains by presenting an admin key to
 * `POST /inspect/queue-board/session`. The cookie holds its expiry time signed with a secret derived
 * from the admin keys (KeyTable.signAsAdmin), never a key; it is HttpOnly, SameSite=Strict and scoped
 * to /admin/queues. Being signed rather than remembered, it is valid in every HTTP process of
 * `serve --processes N` (and of several hosts with the same keys), whichever answers the request.
 *
 * The board itself is the BullMQ adapter's (src/adapters/bullmq/board.ts): its own Redis connection,
 * opened on first use and closed with the app.
 */
export class QueueBoard {
  readonly enabled: boolean;
  private dashboard: QueueDashboard | null = null;

  constructor(
    private readonly services: { queue: Pick<JobQueue, 'backend'>; config: Config; log: Logger },
    private readonly keys: KeyTable,
  ) {
    this.enabled = services.queue.backend === 'bullmq' && services.config.redis_url !== undefined;
  }

  /** Opens a dashboard session for an admin principal; returns the Set-Cookie value, or null when keys are off (nothing to remember). */
  openSession(req: Request, principal: Principal): string | null {
    if (!this.enabled) throw new NeuralCleaveError('not_found', 'the queue dashboard needs Redis (redis_url): the queue runs in this process');
    if (!isAdmin(principal)) throw new NeuralCleaveError('forbidden', 'the queue dashboard needs an admin key (users ["*"])');
    if (!this.keys.enabled) return null;
    const expires = String(Date.now() + SESSION_MS);
    const token = `${expires}.${this.keys.signAsAdmin(`queue-board\u0000${expires}`)}`;
    return `${COOKIE}=${token}; Path=${BOARD_PATH}; Max-Age=${SESSION_MS / 1000}; HttpOnly; SameSite=Strict${req.secure ? '; Secure' : ''}`;
  }

  private principalOf(req: Request): Principal | null {
    if (req.headers.authorization !== undefined || !this.keys.enabled) return this.keys.identify(req.headers.authorization);
    return this.validSession(cookieValue(req, COOKIE)) ? { kind: 'key', users: 'all', label: 'queue-board session' } : null;
  }

  /** a token of openSession's, unexpired, whose signature matches (compared in constant time) */
  private validSession(token: string | undefined): boolean {
    const dot = token?.indexOf('.') ?? -1;
    if (token === undefined || dot < 0) return false;
    const expires = token.slice(0, dot);
    if (!/^\d{1,15}$/.test(expires) || Number(expires) <= Date.now()) return false;
    const presented = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.keys.signAsAdmin(`queue-board\u0000${expires}`));
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  /** The routes under /admin/queues; mount before the API's authentication (they authenticate themselves). */
  routes(): Router {
    const outer = Router();
    outer.use(BOARD_PATH, (req: Request, res: Response, next: NextFunction) => {
      if (!this.enabled) return next(new NeuralCleaveError('not_found', 'the queue dashboard needs Redis (redis_url): the queue runs in this process'));
      const principal = this.principalOf(req);
      if (!principal) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="neuralcleave"');
        return next(new UnauthorizedError('open the queue dashboard from the inspector, or send an admin key'));
      }
      if (!isAdmin(principal)) return next(new NeuralCleaveError('forbidden', 'the queue dashboard needs an admin key (users ["*"])'));
      res.setHeader('Content-Security-Policy', BOARD_CSP);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'no-referrer');
      // an own property, so it outlives the prototype swap below; the page is sent through res.send
      const send = res.send.bind(res);
      res.send = (body?: unknown) => send(typeof body === 'string' && body.startsWith('<!DOCTYPE') ? withoutRemoteLinks(body) : body);
      // the board is an Express app of its own; as when Express mounts one, the request and response
      // get their prototypes back when it hands the request on
      const [request, response] = [Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object];
      this.board().handle(req, res, (err?: unknown) => {
        Object.setPrototypeOf(req, request);
        Object.setPrototypeOf(res, response);
        next(err);
      });
    });
    return outer;
  }

  private board(): QueueDashboard {
    const { config, log } = this.services;
    this.dashboard ??= bullBoard({ ...config, redis_url: config.redis_url! }, log, BOARD_PATH);
    return this.dashboard;
  }

  close(): void {
    const dashboard = this.dashboard;
    this.dashboard = null;
    void dashboard?.close();
  }
}
