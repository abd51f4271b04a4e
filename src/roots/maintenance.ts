import { wire, type Services, type WireOptions } from './library.js';
import { CommandFailed, configFrom, type GlobalOptions } from '../cli/context.js';
import { describeConfigSource, findConfigFile } from '../config/load.js';
import { missingStore } from './where.js';
import { createCliLogger } from '../logger.js';
import { Memory } from '../memory/memory.js';

/** What the CLI's commands use of the services beside `Memory` (doctor, reindex, jobs, ingest, chat, archive). */
export type CliServices = Pick<
  Services,
  'config' | 'log' | 'store' | 'turnLog' | 'longTerm' | 'shortTerm' | 'vectors' | 'queue' | 'embedders' | 'writePath' | 'reconciler' | 'chat' | 'llm' | 'archiver' | 'backends'
>;

/**
 * The composition root of the CLI's one-shot commands (maintenance, ingest, retrieve, chat, jobs,
 * doctor; docs/architecture.md, composition roots): the library's wiring with the CLI's logging,
 * closed when the command is done. `wireOptions` turns off what a command does not use (the
 * reconciler, the in-process workers).
 */
export interface CommandOptions extends WireOptions {
  /** the command only reads: a SQLite file that does not exist is reported (exit 1), never created empty */
  readOnly?: boolean;
}

/** Builds the services for one command, runs it, and always closes them. */
export async function withMemory<T>(opts: GlobalOptions, wireOptions: CommandOptions, fn: (m: Memory, s: CliServices) => Promise<T>): Promise<T> {
  const config = configFrom(opts);
  const missing = wireOptions.readOnly ? missingStore(config) : null;
  if (missing) {
    throw new CommandFailed(
      `no database at ${missing}: nothing is stored there yet, and a command that only reads does not create it (configuration: ${describeConfigSource(findConfigFile(opts.config ? { file: opts.config } : {}))})`,
    );
  }
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

