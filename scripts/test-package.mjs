// The package as a user gets it (issue 27): `npm pack` in the clone, `npm install -g` of the tarball
// into a temporary prefix, then the installed CLI run from a folder outside the clone: --version,
// init --offline, ingest, retrieve, doctor, serve (the inspector page from dist/web) and
// `npx neuralcleave-memory`. Takes nothing; prints each step and its time; exits 0 when all pass.
// Minutes long (the install compiles native modules where no prebuilt binary fits), so it is
// `npm run test:package`, run by .ci/run after `npm test`, not part of `npm test`.
// Needs what `npm ci` needs (network or a warm npm cache, a C++ toolchain); KEEP=1 keeps the folder.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { name, version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'nc-package-'));
const prefix = join(tmp, 'prefix');
const bin = join(prefix, 'bin');
const home = join(tmp, 'home');
const work = join(tmp, 'work');
mkdirSync(home);
mkdirSync(work);

/** what the tarball must hold for the CLI, the server and the library to run */
const REQUIRED = [
  'package.json',
  'README.md',
  'dist/src/cli/main.js',
  'dist/src/index.js',
  'dist/src/index.d.ts',
  'dist/src/client/index.js',
  'dist/src/roots/queues.js',
  'dist/src/adapters/sqlite/migrations.js',
  'dist/src/adapters/postgres/migrations.js',
  // worker threads are started from files next to their modules
  'dist/src/adapters/embedded/scan-worker.js',
  'dist/workers/main.js',
  'dist/web/index.html',
];
/** what a user never needs: sources, tests, benchmarks, evaluation */
const NEVER = /^(src|test|bench|eval|web|scripts|dist\/test|dist\/bench|dist\/eval|node_modules)\//;

let failed = false;
function check(ok, what) {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'}  ${what}\n`);
  if (!ok) failed = true;
}

function timed(what, fn) {
  const started = Date.now();
  const result = fn();
  process.stdout.write(`      ${what}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

/** a user's shell: none of this run's NEURALCLEAVE_* variables, nor the npm_* ones `npm run` sets */
const shellEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NEURALCLEAVE_') && !/^npm_/i.test(k)));
/** ... with the installed bin on PATH and a home of its own (no user config folder of this machine leaks in) */
const userEnv = { ...shellEnv, PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };

function run(cmd, args, options = {}) {
  try {
    return { code: 0, stdout: execFileSync(cmd, args, { cwd: work, env: userEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options }) };
  } catch (err) {
    return { code: err.status ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? String(err) };
  }
}

/** `serve --port 0` until it prints its address; GET `/` and `/health`; then SIGTERM */
function serveOnce() {
  return new Promise((resolve) => {
    const child = spawn(join(bin, 'neuralcleave'), ['serve', '--port', '0', '--processes', '1'], { cwd: work, env: userEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => finish({ error: `not listening after 60 s:\n${out}` }), 60_000);
    let done = false;
    function finish(result) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // resolved once it has exited: the folder it writes in is removed afterwards
      if (child.exitCode !== null || child.signalCode !== null) return resolve(result);
      child.once('exit', () => resolve(result));
      child.kill('SIGTERM');
    }
    const onData = async (d) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || done) return;
      child.stdout.off('data', onData);
      child.stderr.off('data', onData);
      try {
        const base = m[1].replace(/\/$/, '');
        const page = await fetch(`${base}/`);
        const html = await page.text();
        const health = (await (await fetch(`${base}/health`)).json()).status;
        finish({ page: page.status, html, health });
      } catch (err) {
        finish({ error: String(err) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => finish({ error: `serve exited with ${code}:\n${out}` }));
  });
}

try {
  // 1. the tarball as `npm pack` makes it: `prepare` (tsc and the inspector's vite build), then the
  // files of package.json's "files" (run apart, so that the build's output stays off pack's JSON)
  timed('npm run prepare', () => execFileSync('npm', ['run', 'prepare'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] }));
  const [packed] = timed('npm pack', () => JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })));
  const tarball = join(tmp, packed.filename);
  const files = new Set(packed.files.map((f) => f.path));
  for (const f of REQUIRED) check(files.has(f), `the tarball holds ${f}`);
  const extra = [...files].filter((f) => NEVER.test(f));
  check(extra.length === 0, `the tarball holds no sources, tests, benchmarks or evaluation${extra.length ? ` (${extra.slice(0, 5).join(', ')}…)` : ''}`);
  process.stdout.write(`      ${packed.filename}: ${files.size} files, ${(packed.size / 1e6).toFixed(1)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked\n`);

  // 2. the global install the README shows, into a prefix of its own. A global install reads no
  // project .npmrc, so onnxruntime-node's CUDA download is skipped by the variable, as documented.
  // --prefer-offline: tarballs from the cache `npm ci` filled; package metadata (which `npm ci` never
  // fetches, so --offline fails with ENOTCACHED) from the registry.
  const install = timed('npm install -g (tarball)', () =>
    run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: tmp,
      env: { ...shellEnv, ONNXRUNTIME_NODE_INSTALL: 'skip' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  check(install.code === 0, `npm install -g ${packed.filename}${install.code ? `:\n${install.stderr}` : ''}`);
  if (install.code !== 0) throw new Error('the install failed; nothing else to check');

  // 3. the CLI from a folder outside the clone
  const v = run('neuralcleave', ['--version']);
  check(v.code === 0 && v.stdout === `${version}\n`, `neuralcleave --version prints ${version} (got ${JSON.stringify(v.stdout)})`);
  const init = run('neuralcleave', ['init', '--offline']);
  check(init.code === 0 && existsSync(join(work, 'neuralcleave.toml')), `neuralcleave init --offline writes ${join(work, 'neuralcleave.toml')}${init.code ? `: ${init.stderr}` : ''}`);
  writeFileSync(
    join(work, 'turns.jsonl'),
    [
      { user_id: 'alice', session_id: 'trip', role: 'user', content: 'My sister Ana is a dentist in Porto.' },
      { user_id: 'alice', session_id: 'trip', role: 'assistant', content: 'Noted!' },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const ingest = run('neuralcleave', ['ingest', 'turns.jsonl', '--wait']);
  check(ingest.code === 0 && existsSync(join(work, 'data', 'neuralcleave.db')), `neuralcleave ingest turns.jsonl --wait (the database beside the config file)${ingest.code ? `: ${ingest.stderr}` : ''}`);
  const retrieve = run('neuralcleave', ['retrieve', "what is my sister's job?", '--user', 'alice', '--json']);
  const first = retrieve.code === 0 ? JSON.parse(retrieve.stdout).results[0]?.content : retrieve.stderr;
  check(/dentist in Porto/.test(first ?? ''), `neuralcleave retrieve finds the turn (got ${JSON.stringify(first)})`);
  const doctor = run('neuralcleave', ['doctor']);
  check(doctor.code === 0 && /^status +ok$/m.test(doctor.stdout), `neuralcleave doctor: status ok${doctor.code ? `\n${doctor.stdout}${doctor.stderr}` : ''}`);
  const served = await serveOnce();
  check(served.page === 200 && /<script/.test(served.html ?? '') && served.health === 'ok', `neuralcleave serve: the inspector page and /health ok${served.error ? `: ${served.error}` : ''}`);

  // 4. npx by the package's name finds the installed bin (npm's global prefix is the install's)
  const npx = run('npx', ['--no', '--offline', name, '--version'], { env: { ...userEnv, npm_config_prefix: prefix } });
  check(npx.code === 0 && npx.stdout === `${version}\n`, `npx ${name} --version prints ${version}${npx.code ? `: ${npx.stderr}` : ''}`);
} catch (err) {
  check(false, String(err));
} finally {
  if (process.env.KEEP) process.stdout.write(`kept ${tmp}\n`);
  else rmSync(tmp, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
