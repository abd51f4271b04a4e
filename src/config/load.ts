import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { ConfigError, describeDetails, zodDetails } from '../errors.js';
import { CONFIG_KEYS, ConfigSchema, PATH_KEYS, type Config } from './schema.js';

const ENV_PREFIX = 'NEURALCLEAVE_';
/** Variables with the prefix that are not config keys but are still ours. */
const RESERVED_ENV = new Set(['NEURALCLEAVE_CONFIG']);
export const CONFIG_FILE_NAME = 'neuralcleave.toml';

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** explicit file (`--config`); else the discovery of findConfigFile */
  file?: string;
  /** values that win over file and environment (library callers, tests) */
  overrides?: Record<string, unknown>;
  cwd?: string;
}

/** Which configuration file a process uses, how it was found, and where it looked when it found none. */
export interface ConfigSource {
  file: string | null;
  found_by: '--config' | 'NEURALCLEAVE_CONFIG' | 'current folder' | 'folder above the current one' | 'user config folder' | null;
  looked_in: string[];
}

/**
 * The one discovery order every process follows: `--config`, then NEURALCLEAVE_CONFIG, then
 * neuralcleave.toml in the current folder or the nearest folder above it (so a command run in a
 * subfolder of the project finds the project's file), then the user config folder
 * ($XDG_CONFIG_HOME/neuralcleave, else ~/.config/neuralcleave).
 */
export function findConfigFile(options: Pick<LoadConfigOptions, 'env' | 'file' | 'cwd'> = {}): ConfigSource {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  if (options.file) return { file: resolve(cwd, options.file), found_by: '--config', looked_in: [] };
  if (env.NEURALCLEAVE_CONFIG) return { file: resolve(cwd, env.NEURALCLEAVE_CONFIG), found_by: 'NEURALCLEAVE_CONFIG', looked_in: [] };
  const looked: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (existsSync(candidate)) return { file: candidate, found_by: dir === resolve(cwd) ? 'current folder' : 'folder above the current one', looked_in: looked };
    if (dirname(dir) === dir) break;
  }
  looked.push(`${join(resolve(cwd), CONFIG_FILE_NAME)} and the folders above it`);
  const user = userConfigFile(env);
  if (user && existsSync(user)) return { file: user, found_by: 'user config folder', looked_in: looked };
  if (user) looked.push(user);
  return { file: null, found_by: null, looked_in: looked };
}

/** Where `init --user-folder` writes and discovery looks last. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string | null {
  // from the environment only: a process started with neither (a test, a service unit) looks in no home folder
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : null);
  return base ? join(base, 'neuralcleave', CONFIG_FILE_NAME) : null;
}

/** One line for `--help` and `doctor`: which file, found how (or where it looked). */
export function describeConfigSource(source: ConfigSource): string {
  if (source.file) return `${source.file} (${source.found_by === '--config' ? 'from --config' : source.found_by === 'NEURALCLEAVE_CONFIG' ? 'from NEURALCLEAVE_CONFIG' : `found in the ${source.found_by}`})`;
  return `none (looked for ${source.looked_in.join(', then ')}; \`neuralcleave init\` writes one) — defaults and NEURALCLEAVE_* variables`;
}

/**
 * Reads the TOML file and the NEURALCLEAVE_* variables, validates them once and returns a frozen
 * config. This is the only module that reads process.env. Relative paths written in the file, and
 * the default paths when a file is in use, are resolved against the file's folder, so every process
 * using that file uses the same database whatever folder it starts in; relative paths from the
 * environment or overrides stay relative to the working folder, where the person typed them.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const raw: Record<string, unknown> = {};

  const { file } = findConfigFile({ env, cwd, ...(options.file ? { file: options.file } : {}) });
  const fromFile = file ? readTomlFile(file) : {};
  Object.assign(raw, fromFile);

  const fromElsewhere = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || RESERVED_ENV.has(name) || value === undefined) continue;
    const key = name.slice(ENV_PREFIX.length).toLowerCase();
    if (!(CONFIG_KEYS as string[]).includes(key)) {
      throw new ConfigError(`unknown configuration variable ${name}`, [
        { path: name, message: `unknown key; known keys: ${CONFIG_KEYS.join(', ')}` },
      ]);
    }
    raw[key] = value;
    fromElsewhere.add(key);
  }
  for (const key of Object.keys(options.overrides ?? {})) fromElsewhere.add(key);
  Object.assign(raw, options.overrides ?? {});
  const config = parseConfig(raw, file ? `${file} and environment` : 'environment');
  if (!file) return config;
  const base = dirname(file);
  const resolved: Record<string, unknown> = { ...config };
  for (const key of PATH_KEYS) {
    const value = resolved[key];
    if (typeof value === 'string' && !fromElsewhere.has(key) && !isAbsolute(value)) resolved[key] = resolve(base, value);
  }
  return Object.freeze(resolved) as Config;
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
