import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { assertSafeBind } from '../../api/server.js';
import { createLogger } from '../../logger.js';
import { serve } from '../../roots/serve.js';
import { configFrom, parseIntOption, UsageError, type GlobalOptions } from '../context.js';

export function registerServe(program: Command, globals: () => GlobalOptions): void {
  program
    .command('serve')
    .description('the HTTP API; without Redis it also runs the workers in-process')
    .option('--processes <n>', 'HTTP processes sharing the port (default serve_processes: one per core; 1: one process doing everything)')
    .option('--port <n>', 'the port to listen on (0: any free one); overrides `port`', parseIntOption('--port', 0, 65_535))
    .option('--host <address>', 'the address to bind; overrides `host` (anything but loopback needs api_keys)')
    .action(async (opts: { processes?: string; port?: number; host?: string }) => {
      const config = { ...configFrom(globals()), ...(opts.port !== undefined ? { port: opts.port } : {}), ...(opts.host !== undefined ? { host: opts.host } : {}) };
      assertSafeBind(config);
      const log = createLogger(config.log_level);
      return serve(config, log, processCount(opts.processes, config.serve_processes));
    });
}

function processCount(flag: string | undefined, configured: number): number {
  if (flag !== undefined && !/^\d+$/.test(flag)) throw new UsageError(`--processes must be a whole number, not "${flag}"`);
  const n = flag !== undefined ? Number(flag) : configured;
  if (n > 64) throw new UsageError(`--processes ${n} is more than 64`);
  return n === 0 ? availableParallelism() : n;
}

