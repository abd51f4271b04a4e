import type { Command } from 'commander';
import type { AddressInfo } from 'node:net';
import { wire } from '../../app.js';
import { startServer, assertSafeBind } from '../../api/server.js';
import { createLogger } from '../../logger.js';
import { Memory } from '../../memory/memory.js';
import { configFrom, type GlobalOptions } from '../context.js';
import { onShutdown } from '../shutdown.js';

export function registerServe(program: Command, globals: () => GlobalOptions): void {
  program
    .command('serve')
    .description('the HTTP API; without Redis it also runs the workers in-process')
    .action(async () => {
      const config = configFrom(globals());
      assertSafeBind(config);
      const log = createLogger(config.log_level);
      // with Redis the workers are separate `neuralcleave worker` processes unless serve_runs_workers
      const services = await wire(config, { logger: log, scheduleArchival: true, ...(config.serve_runs_workers ? { runWorkers: true } : {}) });
      const memory = new Memory(services);
      const server = await startServer({ memory, services });
      const addr = server.address() as AddressInfo;
      log.info({ host: addr.address, port: addr.port, backends: services.backends() }, 'neuralcleave serving');
      // the line tests and scripts wait for
      process.stderr.write(`listening on http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}\n`);
      await onShutdown(log, async () => {
        await new Promise<void>((r) => server.close(() => r()));
        await services.close();
      });
    });
}
