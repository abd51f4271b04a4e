import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CONFIG_FILE_NAME, userConfigFile } from '../../config/load.js';
import { ConfigSchema } from '../../config/schema.js';
import { UsageError } from '../context.js';

/** The file `init` writes: the keys a new user changes first, with the schema's defaults, each saying what it does. */
export function configTemplate(offline: boolean): string {
  const d = ConfigSchema.parse({});
  const q = (v: string) => JSON.stringify(v);
  return `# neuralcleave.toml, written by \`neuralcleave init\`.
# Every process (serve, worker, mcp and every other command) finds this file the same way: --config,
# then NEURALCLEAVE_CONFIG, then neuralcleave.toml in the current folder or a folder above it, then
# $XDG_CONFIG_HOME/neuralcleave/ (~/.config/neuralcleave/). Relative paths below are read against
# this file's folder, whatever folder a command runs in. Any key can be overridden by the variable
# NEURALCLEAVE_<KEY>; every key and its default is in src/config/schema.ts.

# the SQLite file: turn log, long-term store and embedded vectors (unused when database_url is set)
sqlite_path = ${q(d.sqlite_path)}

# "hash": the built-in lexical embedder, no download; else a transformers.js model id
# (default ${q(d.embedding_model)}), downloaded once into model_cache_dir; an Ollama or
# OpenAI-compatible server instead: embedding_provider and embedding_url (docs/embeddings.md)
embedding_model = ${q(offline ? 'hash' : d.embedding_model)}
# embedding_provider = ${q(d.embedding_provider)}
model_cache_dir = ${q(d.model_cache_dir)}
# a local folder of models (<model_dir>/<model id>/): no downloads
# model_dir = "./models"

# the HTTP API of \`serve\` (any other host than 127.0.0.1 needs api_keys)
# host = ${q(d.host)}
# port = ${d.port}
# [[api_keys]]
# key = "a-long-random-secret-for-alice"
# users = ["alice"]

# optional services; unset: the in-process queue and short-term tier, the embedded vector index
# redis_url = "redis://127.0.0.1:6379"
# qdrant_url = "http://127.0.0.1:6333"
# PostgreSQL instead of the SQLite file (several hosts)
# database_url = "postgres://neuralcleave:secret@127.0.0.1:5432/neuralcleave"

# sessions whose last turn is older than this many days are condensed into one archive entry
# at ${q(d.archival_cron)} (${d.archival_timezone}); pinned memories stay verbatim
# archival_inactive_days = ${d.archival_inactive_days}
`;
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(`write a commented ${CONFIG_FILE_NAME} in the current folder (or the user config folder)`)
    .option('--offline', 'use the built-in "hash" embedder: nothing is downloaded')
    .option('--user-folder', 'write it in the user config folder, found from every folder')
    .option('--force', 'replace an existing file')
    .action((o: { offline?: boolean; userFolder?: boolean; force?: boolean }) => {
      const file = o.userFolder ? userConfigFile() : join(resolve('.'), CONFIG_FILE_NAME);
      if (!file) throw new UsageError('--user-folder: neither XDG_CONFIG_HOME nor HOME is set');
      if (existsSync(file) && !o.force) throw new UsageError(`${file} exists; --force replaces it`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, configTemplate(o.offline === true));
      process.stdout.write(
        `wrote ${file}${o.offline ? ' (embedding_model = "hash": nothing is downloaded)' : ''}\n` +
          `every neuralcleave process run ${o.userFolder ? 'anywhere without a neuralcleave.toml of its own' : 'in this folder or below it'} uses it; ` +
          `from elsewhere: --config ${file} or NEURALCLEAVE_CONFIG=${file}\n` +
          `its database: ${resolve(dirname(file), ConfigSchema.parse({}).sqlite_path)}\n`,
      );
    });
}
