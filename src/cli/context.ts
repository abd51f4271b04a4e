import { wire, type Services, type WireOptions } from '../app.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError, NeuralCleaveError, ValidationError } from '../errors.js';
import { createLogger } from '../logger.js';
import { Memory } from '../memory/memory.js';

/** Bad usage or configuration: exit code 2 (SPEC §9). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof ValidationError) return 2;
  if ((err as { code?: string }).code?.startsWith?.('commander.')) return 2;
  return 1;
}

export function oneLine(err: unknown): string {
  if (err instanceof NeuralCleaveError || err instanceof UsageError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

export interface GlobalOptions {
  config?: string;
}

export function configFrom(opts: GlobalOptions): Config {
  return loadConfig(opts.config ? { file: opts.config } : {});
}

/** Builds the services for one command, runs it, and always closes them. */
export async function withMemory<T>(opts: GlobalOptions, wireOptions: WireOptions, fn: (m: Memory, s: Services) => Promise<T>): Promise<T> {
  const config = configFrom(opts);
  // CLI logs: warnings and up, on stderr, so that stdout carries only results
  const logger = createLogger(config.log_level === 'info' ? 'warn' : config.log_level);
  const services = await wire(config, { logger, ...wireOptions });
  const memory = new Memory(services);
  try {
    return await fn(memory, services);
  } finally {
    await services.close();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function parseIntOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
    return n;
  };
}
