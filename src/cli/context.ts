import { wire, type Services, type WireOptions } from '../app.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError, NeuralCleaveError, ValidationError } from '../errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { createCliLogger } from '../logger.js';
import { Memory } from '../memory/memory.js';

/** Bad usage or configuration: exit code 2 (see exit-codes.ts). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command ran and could not do what was asked (nothing matched, a backend failed): exit code 1. */
export class CommandFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailed';
  }
}

export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof ValidationError) return EXIT.usage;
  if ((err as { code?: string }).code?.startsWith?.('commander.')) return EXIT.usage;
  return EXIT.failure;
}

export function oneLine(err: unknown): string {
  if (err instanceof NeuralCleaveError || err instanceof UsageError || err instanceof CommandFailed) return err.message;
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
  // CLI logs: warnings and up, on stderr as lines for a person, so that stdout carries only results
  const logger = createCliLogger(config.log_level === 'info' ? 'warn' : config.log_level);
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
