// The Compose files, checked without a Docker engine: parsed as YAML (merge keys resolved, as Compose
// does), `${VAR…}` interpolated by Compose's rules, and every application service's environment fed
// to the real config loader — an unknown NEURALCLEAVE_* name or a bad value fails here as it would
// fail the container's start — and its command run through the real CLI's `--help`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { tmpDir } from '../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const APP_IMAGE = 'neuralcleave:local';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
  profiles?: string[];
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test?: string[] };
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/**
 * Compose's interpolation: `$$` is a dollar; `${V}` / `$V` the variable or ""; `${V:-d}` d when V is
 * unset or empty, `${V-d}` when unset; `${V:?msg}` / `${V?msg}` an error when unset (or empty).
 */
function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (all, name: string | undefined, colon: string, op: string, arg: string, bare: string | undefined) => {
    if (all === '$$') return '$';
    if (bare) return env[bare] ?? '';
    const v = env[name!];
    const missing = v === undefined || (colon === ':' && v === '');
    if (op === '-') return missing ? arg : v!;
    if (op === '?') {
      if (missing) throw new Error(`required variable ${name} is missing: ${arg}`);
      return v!;
    }
    return v ?? '';
  });
}

function load(file: string, env: Record<string, string | undefined>): ComposeFile {
  return parse(interpolate(readFileSync(`${ROOT}${file}`, 'utf8'), env), { merge: true }) as ComposeFile;
}

const apps = (c: ComposeFile) => Object.entries(c.services).filter(([, s]) => s.image === APP_IMAGE);

/** The container's config: its environment (as strings, as a process sees them) through the real loader. */
function configOf(s: Service) {
  const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
  // an empty variable is how Compose passes "unset" through `${V:-}`; the loader must read it so
  return loadConfig({ env, cwd: tmpDir('nc-compose-') });
}

/** The options a CLI command takes, from its `--help`; fails when the command does not exist. */
const helpCache = new Map<string, string>();
function helpOf(command: string): string {
  let out = helpCache.get(command);
  if (out === undefined) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, command, '--help'], { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
    assert.equal(r.status, 0, `neuralcleave ${command} --help: ${r.stderr}`);
    out = r.stdout;
    helpCache.set(command, out);
  }
  return out;
}

/** Checks every application service of a file: env names and values, command and options, references. */
function checkFile(c: ComposeFile): void {
  const names = new Set(Object.keys(c.services));
  const declared = new Set(Object.keys(c.volumes ?? {}));
  for (const [name, s] of Object.entries(c.services)) {
    for (const [dep, cond] of Object.entries(s.depends_on ?? {})) {
      assert.ok(names.has(dep), `${name} depends on ${dep}, which is not a service`);
      // a service behind a profile is absent unless the profile is on: depending on it must be optional
      if (c.services[dep]!.profiles) assert.equal(cond.required, false, `${name} depends on ${dep} (profile ${c.services[dep]!.profiles!.join(',')}) without required: false`);
    }
    for (const v of s.volumes ?? []) {
      const source = v.split(':')[0]!;
      if (!source.startsWith('.') && !source.startsWith('/')) assert.ok(declared.has(source), `${name} mounts volume ${source}, not declared`);
    }
  }
  for (const [name, s] of apps(c)) {
    assert.ok(s.command && s.command.length > 0, `${name} has a command`);
    const [command, ...args] = s.command!;
    const help = helpOf(command!);
    assert.match(help, new RegExp(`^Usage: neuralcleave ${command} `, 'm'), `${name}: ${command} is a command of the CLI`);
    for (const a of args.filter((x) => x.startsWith('--'))) assert.ok(help.includes(`${a} `) || help.includes(`${a},`), `${name}: ${command} takes ${a}`);
    for (const key of Object.keys(s.environment ?? {})) assert.match(key, /^NEURALCLEAVE_[A-Z0-9_]+$/, `${name}: ${key} is a NEURALCLEAVE_ variable`);
    configOf(s); // throws on an unknown name or a bad value
  }
}

const SECRETS = { POSTGRES_PASSWORD: 's3cret-pw', NEURALCLEAVE_API_KEYS: 'a-long-random-key-0001=*' };

describe('Compose interpolation (the rules the files rely on)', () => {
  it('reads defaults, required variables and escaped dollars as Compose does', () => {
    assert.equal(interpolate('${A:-x} ${B-y} ${C:-z} $$D ${E}', { B: '', C: '' }), 'x  z $D ');
    assert.equal(interpolate('${A:?need A}', { A: 'v' }), 'v');
    assert.throws(() => interpolate('${A:?need A}', { A: '' }), /A is missing: need A/);
    assert.throws(() => interpolate('${A?need A}', {}), /A is missing/);
  });
});

describe('docker-compose.yml (one host)', () => {
  it('runs redis, qdrant, the API and workers, with a postgres service behind the `postgres` profile', () => {
    const c = load('docker-compose.yml', SECRETS);
    assert.deepEqual(Object.keys(c.services).sort(), ['api', 'postgres', 'qdrant', 'redis', 'worker']);
    assert.deepEqual(c.services.postgres!.profiles, ['postgres']);
    assert.match(c.services.postgres!.image!, /^postgres:1[5-9]/);
    assert.ok(c.services.postgres!.healthcheck?.test?.includes('pg_isready'));
    checkFile(c);
  });

  it('uses SQLite unless NEURALCLEAVE_DATABASE_URL is given, then PostgreSQL', () => {
    for (const [, s] of apps(load('docker-compose.yml', SECRETS))) {
      const config = configOf(s) as Record<string, unknown>;
      assert.equal(config.database_url, undefined);
      assert.equal(config.sqlite_path, '/data/neuralcleave.db');
    }
    const url = 'postgres://neuralcleave:s3cret-pw@postgres:5432/neuralcleave';
    for (const [, s] of apps(load('docker-compose.yml', { ...SECRETS, NEURALCLEAVE_DATABASE_URL: url }))) {
      assert.equal((configOf(s) as Record<string, unknown>).database_url, url);
    }
  });
});

describe('docker-compose.multi-host.yml', () => {
  it('runs two APIs and two workers on one PostgreSQL and one Redis, Qdrant optional', () => {
    const c = load('docker-compose.multi-host.yml', SECRETS);
    checkFile(c);
    assert.deepEqual(Object.keys(c.services).sort(), ['api-1', 'api-2', 'postgres', 'qdrant', 'redis', 'worker-1', 'worker-2']);
    assert.deepEqual(c.services.qdrant!.profiles, ['qdrant']);
    const roles = apps(c).map(([, s]) => s.command![0]).sort();
    assert.deepEqual(roles, ['serve', 'serve', 'worker', 'worker']);
    const pgEnv = c.services.postgres!.environment!;
    for (const [name, s] of apps(c)) {
      const config = configOf(s) as Record<string, unknown>;
      const db = new URL(String(config.database_url));
      assert.equal(db.hostname, 'postgres', `${name} reaches the postgres service`);
      assert.equal(db.username, pgEnv.POSTGRES_USER);
      assert.equal(decodeURIComponent(db.password), pgEnv.POSTGRES_PASSWORD);
      assert.equal(db.pathname, `/${pgEnv.POSTGRES_DB}`);
      assert.equal(new URL(String(config.redis_url)).hostname, 'redis');
      assert.equal(config.qdrant_url, undefined, `${name}: the embedded index over PostgreSQL unless Qdrant is asked for`);
      assert.equal(s.environment!.NEURALCLEAVE_SQLITE_PATH, undefined, `${name} names no SQLite file`);
      assert.equal(s.depends_on?.postgres?.condition, 'service_healthy');
    }
  });

  it('shares no file between processes, and publishes each API on a port of its own', () => {
    const c = load('docker-compose.multi-host.yml', SECRETS);
    const mounts = apps(c).flatMap(([name, s]) => (s.volumes ?? []).map((v) => ({ name, source: v.split(':')[0]! })));
    const bySource = new Map<string, string[]>();
    for (const m of mounts) bySource.set(m.source, [...(bySource.get(m.source) ?? []), m.name]);
    for (const [source, users] of bySource) assert.equal(users.length, 1, `volume ${source} is mounted by ${users.join(' and ')}`);
    const ports = apps(c).flatMap(([, s]) => s.ports ?? []).map((p) => p.split(':').slice(0, -1).join(':'));
    assert.equal(ports.length, 2);
    assert.equal(new Set(ports).size, 2, `host ports ${ports.join(', ')}`);
  });

  it('turns to Qdrant when NEURALCLEAVE_QDRANT_URL is given, and refuses to start without its secrets', () => {
    const c = load('docker-compose.multi-host.yml', { ...SECRETS, NEURALCLEAVE_QDRANT_URL: 'http://qdrant:6333' });
    for (const [, s] of apps(c)) assert.equal((configOf(s) as Record<string, unknown>).qdrant_url, 'http://qdrant:6333');
    assert.throws(() => load('docker-compose.multi-host.yml', { NEURALCLEAVE_API_KEYS: SECRETS.NEURALCLEAVE_API_KEYS }), /POSTGRES_PASSWORD is missing/);
    assert.throws(() => load('docker-compose.multi-host.yml', { POSTGRES_PASSWORD: SECRETS.POSTGRES_PASSWORD }), /NEURALCLEAVE_API_KEYS is missing/);
  });
});
