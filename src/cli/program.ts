import { Command } from 'commander';
import { configFrom, oneLine, type GlobalOptions } from './context.js';
import { describeConfigSource, findConfigFile } from '../config/load.js';
import { packageVersion } from '../package-info.js';
import { describeStore } from '../roots/where.js';
import { registerArchive } from './commands/archive.js';
import { registerChat } from './commands/chat.js';
import { registerMemoryCompact } from './commands/compact.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExport } from './commands/export.js';
import { registerIngest } from './commands/ingest.js';
import { registerInit } from './commands/init.js';
import { registerJobs } from './commands/jobs.js';
import { registerMaintenance } from './commands/maintenance.js';
import { registerMcp } from './commands/mcp.js';
import { registerMemory } from './commands/memory.js';
import { registerReindex } from './commands/reindex.js';
import { registerRetrieve } from './commands/retrieve.js';
import { registerServe } from './commands/serve.js';
import { registerWorker } from './commands/worker.js';

/** Every command of the CLI, registered on one program (main.ts runs it; a test reads its commands). */
export function buildProgram(): Command {
  const program = new Command('neuralcleave')
    .description('NeuralCleave memory: conversation memory for chat assistants')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('-c, --config <file>', 'configuration file (default: NEURALCLEAVE_CONFIG, else neuralcleave.toml here or above, else ~/.config/neuralcleave/)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();

  // every --help ends with the file and the database this command would use, from this folder
  program.addHelpText('afterAll', () => {
    const source = findConfigFile(globals().config ? { file: globals().config } : {});
    let database: string;
    try {
      database = describeStore(configFrom(globals()));
    } catch (err) {
      database = `unknown: ${oneLine(err)}`;
    }
    return `\nconfiguration: ${describeConfigSource(source)}\ndatabase:      ${database}\n`;
  });

  registerInit(program);
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
  return program;
}
