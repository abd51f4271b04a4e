import { wire, type WireOptions } from './roots/library.js';
import { loadConfig, parseConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { Memory } from './memory/memory.js';

export type { Config } from './config/schema.js';
export type { MemoryEntry, RetrievalResult, Explain, Tier, Kind } from './domain/entry.js';
export type { Turn, TurnInput, Role } from './domain/turn.js';
export type { RetrieveRequestInput } from './retrieval/request.js';
export type { RetrieveResponse } from './retrieval/retrieve.js';
export { Memory, type ReadyReport } from './memory/memory.js';
export { RetrieveFiltersSchema, type RecordFilter, type RecordFilterInput } from './domain/filters.js';
export { RetrieveRequestSchema } from './retrieval/request.js';
export { formatPromptBlocks } from './retrieval/prompt-blocks.js';
export { loadConfig, parseConfig } from './config/load.js';
export * from './errors.js';

/**
 * Creates the memory service for a Node program that embeds it. With no argument the configuration
 * comes from `neuralcleave.toml` and NEURALCLEAVE_* variables; an object is validated like the file.
 */
export async function createMemory(config?: Record<string, unknown> | Config, options: WireOptions = {}): Promise<Memory> {
  const resolved = config === undefined ? loadConfig() : parseConfig({ ...config });
  return new Memory(await wire(resolved, options));
}
