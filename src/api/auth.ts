import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { ApiKey } from '../config/schema.js';
import { DEFAULT_USER } from '../domain/turn.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';

/**
 * Who a request acts for. `open`: no api_keys are configured (the server then binds loopback only) and
 * the request names its user. `key`: a valid API key, bound to some user ids or to all of them.
 */
/** `holder` names what grants the access in a refusal, when it is not an API key (`mcp --user`). */
export type Principal = { kind: 'open' } | { kind: 'key'; users: ReadonlySet<string> | 'all'; label: string; holder?: string };

interface KeyRecord {
  digest: Buffer;
  users: ReadonlySet<string> | 'all';
  label: string;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

const digestOf = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * The configured API keys, hashed once at construction. A presented key is hashed too and compared
 * with every stored digest through `timingSafeEqual` (equal lengths by construction, no early exit), so
 * the time taken says nothing about how much of a key was right, nor which key matched.
 */
export class KeyTable {
  private readonly records: readonly KeyRecord[];

  constructor(keys: readonly ApiKey[]) {
    this.records = keys.map((k, i) => ({
      digest: digestOf(k.key),
      users: k.users.includes('*') ? 'all' : new Set(k.users),
      // what logs may say about a key: its position in the config, never the key
      label: `api_keys[${i}]`,
    }));
  }

  get enabled(): boolean {
    return this.records.length > 0;
  }

  /**
   * An HMAC of `value` under a secret derived from the admin keys' digests: the same in every process
   * given the same keys (the HTTP processes of `serve --processes N`, or of several hosts), unknown to
   * anyone without an admin key, and changed when the admin keys change. Signs the queue dashboard's
   * session cookie, which then needs no state of any one process.
   */
  signAsAdmin(value: string): string {
    const secret = createHash('sha256').update('neuralcleave admin signature\u0000');
    for (const r of this.records) if (r.users === 'all') secret.update(r.digest);
    return createHmac('sha256', secret.digest()).update(value, 'utf8').digest('base64url');
  }

  /** the principal of an `Authorization` header value; null for a missing, malformed or unknown key */
  identify(header: string | undefined): Principal | null {
    if (!this.enabled) return { kind: 'open' };
    const m = header === undefined ? null : header.match(BEARER);
    if (!m) return null;
    const presented = digestOf(m[1]!);
    let found: KeyRecord | null = null;
    for (const r of this.records) if (timingSafeEqual(r.digest, presented) && found === null) found = r;
    return found ? { kind: 'key', users: found.users, label: found.label } : null;
  }
}

export function mayTouch(p: Principal, userId: string): boolean {
  return p.kind === 'open' || p.users === 'all' || p.users.has(userId);
}

/** An admin: a key bound to every user (users ["*"]), or no keys configured (loopback only). */
export const isAdmin = (p: Principal): boolean => p.kind === 'open' || p.users === 'all';

/** Throws 403 unless the principal may touch the user's memories. */
export function assertMayTouch(p: Principal, userId: string): void {
  if (!mayTouch(p, userId)) throw new ForbiddenError(userId, p.kind === 'key' ? p.holder : undefined);
}

/**
 * The user a request acts for when it names none: the key's only user when it is bound to exactly
 * one, else `"default"` (docs/architecture.md, records), which is then checked like any other.
 */
export function defaultUserOf(p: Principal): string {
  return boundToOneUser(p) ? [...p.users][0]! : DEFAULT_USER;
}

/** A key (or `mcp --user`) that may touch exactly one user: naming no user means that one. */
export function boundToOneUser(p: Principal): p is Principal & { kind: 'key'; users: ReadonlySet<string> } {
  return p.kind === 'key' && p.users !== 'all' && p.users.size === 1;
}

/** Puts the principal on `res.locals`, or answers 401. Mounted after the routes that need no key. */
export function authenticate(keys: KeyTable) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const principal = keys.identify(req.headers.authorization);
    if (!principal) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="neuralcleave"');
      next(new UnauthorizedError(req.headers.authorization === undefined ? undefined : 'the API key is not valid'));
      return;
    }
    res.locals.principal = principal;
    next();
  };
}

export function principalOf(res: Response): Principal {
  const p = res.locals.principal as Principal | undefined;
  // routes are mounted behind `authenticate`; reaching here without a principal is a wiring bug
  if (!p) throw new Error('route reached without authentication');
  return p;
}
