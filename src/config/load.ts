import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ConfigError, describeDetails, zodDetails } from '../errors.js';
import { CONFIG_KEYS, ConfigSchema, type Config } from './schema.js';

const ENV_PREFIX = 'NEURALCLEAVE_';
/** Variables with the prefix that are not config keys but are still ours. */
const RESERVED_ENV = new Set(['NEURALCLEAVE_CONFIG']);

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** explicit file; else NEURALCLEAVE_CONFIG, else ./neuralcleave.toml when it exists */
  file?: string;
  /** values that win over file and environment (library callers, tests) */
  overrides?: Record<string, unknown>;
  cwd?: string;
}

/**
 * Reads the TOML file and the NEURALCLEAVE_* variables, validates them once and returns a frozen
 * config. This is the only module that reads process.env.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const raw: Record<string, unknown> = {};

  const file = options.file ?? env.NEURALCLEAVE_CONFIG ?? defaultFile(cwd);
  if (file) Object.assign(raw, readTomlFile(resolve(cwd, file)));

  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || RESERVED_ENV.has(name) || value === undefined) continue;
    const key = name.slice(ENV_PREFIX.length).toLowerCase();
    if (!(CONFIG_KEYS as string[]).includes(key)) {
      throw new ConfigError(`unknown configuration variable ${name}`, [
        { path: name, message: `unknown key; known keys: ${CONFIG_KEYS.join(', ')}` },
      ]);
    }
    raw[key] = value;
  }
  Object.assign(raw, options.overrides ?? {});
  return parseConfig(raw, file ? `${file} and environment` : 'environment');
}

/** Validates a plain object of config values (library callers pass one to createMemory). */
export function parseConfig(raw: Record<string, unknown>, source = 'configuration'): Config {
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const details = zodDetails(parsed.error.issues).map((d) =>
      d.path === '(root)' && /Unrecognized key/i.test(d.message) ? { ...d, path: 'key' } : d,
    );
    throw new ConfigError(`invalid configuration in ${source}: ${describeDetails(details)}`, details);
  }
  return Object.freeze(parsed.data);
}

function defaultFile(cwd: string): string | undefined {
  const candidate = resolve(cwd, 'neuralcleave.toml');
  return existsSync(candidate) ? candidate : undefined;
}

function readTomlFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${path}: ${(err as Error).message}`);
  }
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`configuration file ${path} is not valid TOML: ${(err as Error).message}`);
  }
}
