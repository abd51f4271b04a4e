import type { Logger } from '../logger.js';

/**
 * Resolves after SIGTERM/SIGINT once `cleanup` has run: in-flight work finishes (or, for BullMQ,
 * jobs are handed back) before the process exits. A second signal exits at once.
 */
export function onShutdown(log: Logger, cleanup: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(130);
      stopping = true;
      log.info({ signal }, 'shutting down');
      cleanup().then(
        () => resolve(),
        (err: unknown) => {
          log.error({ err: (err as Error).message }, 'error during shutdown');
          resolve();
        },
      );
    };
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  });
}
