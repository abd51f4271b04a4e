#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { exitCodeFor, oneLine, type GlobalOptions } from './context.js';
import { EXIT } from './exit-codes.js';
import { registerArchive } from './commands/archive.js';
import { registerChat } from './commands/chat.js';
import { registerMemoryCompact } from './commands/compact.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExport } from './commands/export.js';
import { registerIngest } from './commands/ingest.js';
import { registerJobs } from './commands/jobs.js';
import { registerMaintenance } from './commands/maintenance.js';
import { registerMcp } from './commands/mcp.js';
import { registerMemory } from './commands/memory.js';
import { registerReindex } from './commands/reindex.js';
import { registerRetrieve } from './commands/retrieve.js';
import { registerServe } from './commands/serve.js';
import { registerWorker } from './commands/worker.js';

const program = new Command('neuralcleave')
  .description('NeuralCleave memory: conversation memory for chat assistants')
  .option('-c, --config <file>', 'configuration file (default ./neuralcleave.toml or NEURALCLEAVE_CONFIG)')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });
const globals = (): GlobalOptions => program.opts<GlobalOptions>();

registerServe(program, globals);
registerIngest(program, globals);
registerRetrieve(program, globals);
const memoryGroup = registerMemory(program, globals);
registerReindex(memoryGroup, globals);
registerMemoryCompact(memoryGroup, globals);
registerMaintenance(memoryGroup, globals);
registerArchive(memoryGroup, globals);
registerExport(program, globals);
registerChat(program, globals);
registerDoctor(program, globals);
registerWorker(program, globals);
registerJobs(program, globals);
registerMcp(program, globals);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // help and version print themselves and exit 0; anything else is bad usage
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else {
    process.stderr.write(`neuralcleave: ${oneLine(err)}\n`);
    process.exitCode = exitCodeFor(err);
  }
}
