#!/usr/bin/env node
import { CommanderError } from 'commander';
import { exitCodeFor, oneLine } from './context.js';
import { EXIT } from './exit-codes.js';
import { buildProgram } from './program.js';

const program = buildProgram();

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
