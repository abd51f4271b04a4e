import { workerMain } from '../src/roots/worker.js';

/**
 * The worker process's entry point for an orchestrator that starts it as a script
 * (`node dist/workers/main.js`): every queue, configured from neuralcleave.toml and NEURALCLEAVE_*
 * variables. `neuralcleave worker --queues …` is the same process with a choice of queues. It only
 * calls its composition root (docs/architecture.md, composition roots).
 */
await workerMain();
