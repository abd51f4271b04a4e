import type { JobQueue } from '../../queues/queue.js';
import type { ChatPipeline } from '../chat/pipeline.js';
import type { Config } from '../config/schema.js';
import type { HealthDeps } from '../health.js';
import type { Logger } from '../logger.js';
import type { WritePath } from '../memory/write-path.js';
import type { ShortTermStore } from '../ports/short-term.js';
import type { Memory } from '../memory/memory.js';
import type { KeyTable } from './auth.js';
import type { ApiMetrics, MetricsDeps } from './metrics.js';
import type { ApiSchemas } from './schemas.js';

/**
 * What the HTTP API (and the MCP tools it serves) use of the services, beside the `Memory` facade: a
 * composition root hands in its services, which hold these (docs/architecture.md, composition roots).
 */
export interface ApiServices extends HealthDeps, MetricsDeps {
  config: Config;
  log: Logger;
  queue: JobQueue;
  shortTerm: ShortTermStore;
  writePath: Pick<WritePath, 'addTurns'>;
  chat: Pick<ChatPipeline, 'chat'>;
}

/** What every router is built from (by `createApp`); routers hold no state of their own. */
export interface RouteContext {
  memory: Memory;
  services: ApiServices;
  schemas: ApiSchemas;
  keys: KeyTable;
  metrics: ApiMetrics;
}
