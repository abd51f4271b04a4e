#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { exitCodeFor, oneLine, type GlobalOptions } from './context.js';
import { registerDoctor } from './commands/doctor.js';
import { registerIngest } from './commands/ingest.js';
import { registerMemory } from './commands/memory.js';
import { registerRetrieve } from './commands/retrieve.js';
import { registerServe } from './commands/serve.js';

const program = new Command('neuralcleave')
  .description('NeuralCleave memory: conversation memory for chat assistants')
  .option('-c, --config <file>', 'configuration file (default ./neuralcleave.toml or NEURALCLEAVE_CONFIG)')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });
const globals = (): GlobalOptions => program.opts<GlobalOptions>();

registerServe(program, globals);
registerIngest(program, globals);
registerRetrieve(program, globals);
registerMemory(program, globals);
registerDoctor(program, globals);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // help and version print themselves and exit 0; anything else is bad usage
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`neuralcleave: ${oneLine(err)}\n`);
    process.exitCode = exitCodeFor(err);
  }
}
