import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { NeuralCleaveError } from '../errors.js';
import { packageRoot } from '../package-info.js';

/**
 * What the inspector page may load: its own files and its own API, nothing from another host (no
 * CDN fonts or scripts), no inline script, and no framing by another site. The browser enforces it,
 * so a later change that adds a remote asset fails visibly instead of leaking requests.
 */
export const INSPECTOR_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "object-src 'none'",
].join('; ');

/** Where `npm run build` (and `npm install`, through `prepare`) writes the inspector: dist/web of the package. */
export function defaultWebRoot(): string {
  return join(packageRoot(), 'dist', 'web');
}

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', INSPECTOR_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * Serves the built inspector: `/` is its index.html, `/assets/*` its hashed bundles. Mounted before
 * authentication, because the page and its scripts hold no data (every byte of memory comes through
 * the API with the key the user types in). Only files that exist in the built folder are answered;
 * every other path falls through to the API routes, which therefore keep precedence.
 *
 * When the folder was never built, `GET /` answers a 404 that says how to build it.
 */
export function webAssets(root: string | null): Router {
  const router = Router();
  if (root === null) return router;
  if (!existsSync(join(root, 'index.html'))) {
    router.get('/', (_req: Request, _res: Response, next: NextFunction) => {
      next(new NeuralCleaveError('not_found', `the memory inspector is not built (no ${join(root, 'index.html')}); run \`npm run build\``));
    });
    return router;
  }
  router.use(
    express.static(root, {
      index: 'index.html',
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders(res, path) {
        securityHeaders(res);
        // bundles carry a content hash in their names; the page itself must always be revalidated
        res.setHeader('Cache-Control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}
