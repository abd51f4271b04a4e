import { Router } from 'express';
import type { RouteContext } from './context.js';
import type { RouteDoc } from './openapi.js';
import { QueueBoard } from './queue-board.js';
import { inspectSchemas } from './inspect-schemas.js';
import { inspectDocs, inspectRouter } from './routes/inspect.js';
import { defaultWebRoot, webAssets } from './static.js';

export interface InspectorOptions {
  /** the built page's folder; null serves no page; default dist/web of the package */
  webRoot?: string | null;
}

/**
 * The memory inspector, as `createApp` mounts it: `pages` (the built web page at `/` and the queue
 * dashboard at /admin/queues, which authenticate on their own terms) go before the API's
 * authentication; `api` (the /inspect routes) goes with the other routers, behind it.
 */
export function createInspector(ctx: RouteContext, options: InspectorOptions = {}) {
  const board = new QueueBoard(ctx.services, ctx.keys);
  const schemas = inspectSchemas();
  const pages = Router();
  pages.use(webAssets(options.webRoot === undefined ? defaultWebRoot() : options.webRoot));
  pages.use(board.routes());
  return {
    pages,
    api: inspectRouter(ctx, board, schemas),
    docs: inspectDocs(schemas) as RouteDoc[],
    close: () => board.close(),
  };
}
