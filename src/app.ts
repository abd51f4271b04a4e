/**
 * The library's composition root under its historical path (docs/architecture.md, composition
 * roots): programs and tests that wire everything in one process import `wire` from here.
 */
export { wire, type Services, type ServiceEvents, type WireOptions, type SharedBackends } from './roots/library.js';
