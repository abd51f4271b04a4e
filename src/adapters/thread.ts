import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running `sibling`, a module beside `from` (an `import.meta.url`) named without its
 * extension. Under tsx (the tests) the modules are TypeScript, and a worker thread does not inherit
 * tsx's loader: the thread registers it before importing the module.
 */
export function siblingThread(from: string, sibling: string, options: WorkerOptions): Worker {
  return from.endsWith('.ts')
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => { t.register(); return import(${JSON.stringify(new URL(`./${sibling}.ts`, from).href)}); })`,
        { eval: true, ...options },
      )
    : new Worker(new URL(`./${sibling}.js`, from), options);
}
