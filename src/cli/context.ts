import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError, NeuralCleaveError, ValidationError } from '../errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';

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
