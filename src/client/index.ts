/**
 * `neuralcleave-memory/client`: the typed HTTP client. Nothing of the server is imported at run time
 * (test/integration/client/bundle.test.ts bundles this entry for the browser and checks it).
 */
export { MemoryClient, type CallOptions, type MemoryClientOptions } from './client.js';
export * from './errors.js';
export type * from './types.js';
