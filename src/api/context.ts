import type { Services } from '../app.js';
import type { Memory } from '../memory/memory.js';
import type { KeyTable } from './auth.js';
import type { ApiMetrics } from './metrics.js';
import type { ApiSchemas } from './schemas.js';

/** What every router is built from (by `createApp`); routers hold no state of their own. */
export interface RouteContext {
  memory: Memory;
  services: Services;
  schemas: ApiSchemas;
  keys: KeyTable;
  metrics: ApiMetrics;
}
