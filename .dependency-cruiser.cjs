/**
 * The import rules of docs/architecture.md (layers and folders), checked by `npm run check:cycles`
 * (part of `npm test`). Type-only imports count: a cycle through types is still a cycle of modules.
 */
const USE_CASES = '^src/(retrieval|memory|compaction|archival|chat)/';
const ROOTS = '^src/(roots/|app\\.ts$)';
const PROCESSORS = '^workers/(?!main\\.ts$)[^/]+\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'an import cycle: modules that need each other are one module, or one of them holds what both need',
      from: {},
      to: { circular: true },
    },
    {
      name: 'inner-layers-no-adapters',
      severity: 'error',
      comment: 'domain, ports, use cases, queues and processors see backends through ports only; adapters are chosen by a composition root',
      from: { path: ['^src/domain/', '^src/ports/', USE_CASES, '^queues/', PROCESSORS] },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'inner-layers-no-roots',
      severity: 'error',
      comment: 'only the process entry points call a composition root',
      from: { path: ['^src/domain/', '^src/ports/', USE_CASES, '^queues/', PROCESSORS] },
      to: { path: ROOTS },
    },
    {
      name: 'queues-only-domain-and-ports',
      severity: 'error',
      comment: 'queues/ imports nothing of src/ but domain/ and ports/ (use cases may import it)',
      from: { path: '^queues/' },
      to: { path: '^src/', pathNot: '^src/(domain|ports)/' },
    },
    {
      name: 'workers-only-from-roots',
      severity: 'error',
      comment: 'the processors are bound to their dependencies by a composition root, and by nothing else',
      from: { path: '^(src|queues)/', pathNot: ROOTS },
      to: { path: '^workers/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
  },
};
