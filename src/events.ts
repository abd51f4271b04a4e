import type { JobEvent } from '../queues/observe.js';
import type { Tier } from './domain/entry.js';
import type { TierReport } from './retrieval/retrieve.js';

/** Listeners on what the services do (the API's /metrics subscribes); per wiring, nothing global. */
export interface ServiceEvents {
  /** one call per tier per retrieval */
  tier: Set<(tier: Tier, report: TierReport) => void>;
  /** one call per processor run in this process */
  job: Set<(event: JobEvent) => void>;
}
