import { wire, type Services, type WireOptions } from './library.js';
import { configFrom, type GlobalOptions } from '../cli/context.js';
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
/** Builds the services for one command, runs it, and always closes them. */
export async function withMemory<T>(opts: GlobalOptions, wireOptions: WireOptions, fn: (m: Memory, s: CliServices) => Promise<T>): Promise<T> {
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

