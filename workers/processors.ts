import type { ProcessorMap } from '../queues/queue.js';
import type { ProcessorDeps } from './deps.js';
import { processEmbed } from './embed.js';
import { processPersist } from './persist.js';

/** The processor of each queue, bound to its dependencies. */
export function createProcessors(deps: ProcessorDeps, extra: ProcessorMap = {}): ProcessorMap {
  return {
    embed: (data) => processEmbed(data, deps),
    persist: (data) => processPersist(data, deps),
    ...extra,
  };
}
