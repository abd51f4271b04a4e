import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { turnInputSchema, TURN_EXAMPLE } from '../../../src/domain/turn.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { runCli, startCli, stop } from '../../helpers/cli.js';
import { freePort } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** a stderr line a person reads, not a JSON log record */
const isJsonLine = (l: string) => l.trimStart().startsWith('{');

/** What a new user meets in the first hour, through the built CLI (stdout, stderr and exit code each time). */
describe('the first hour with the CLI (embedded defaults, hash embedder)', () => {
  const dir = tmpDir();
  const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'), NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'info' };
  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });

  it('ingest --help and the README show every field of a turn, which are required, and an example line that ingests', async () => {
    const help = await cli(['ingest', '--help']);
    assert.equal(help.code, EXIT.ok);
    assert.equal(help.stderr, '');
    const shape = turnInputSchema(32_000).shape;
    for (const [name, field] of Object.entries(shape)) {
      const required = !(field as { safeParse: (v: unknown) => { success: boolean } }).safeParse(undefined).success;
      assert.match(help.stdout, new RegExp(`\\n  ${name} +${required ? 'required' : 'optional'}  \\S`), `--help lists ${name}`);
      assert.match(README, new RegExp(`\\| \`${name}\` \\| ${required ? 'required' : 'optional'} \\|`), `README lists ${name}`);
    }
    assert.ok(help.stdout.includes(TURN_EXAMPLE), 'an example line in --help');
    assert.ok(README.includes(TURN_EXAMPLE), 'the same example line in the README');

    const file = join(dir, 'example.jsonl');
    writeFileSync(file, `${TURN_EXAMPLE}\n`);
    const r = await cli(['ingest', file, '--wait']);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.equal(r.stdout, '');
    // the example is from 2024: the next archival run would condense it, and ingest says so
    assert.match(r.stderr, /ingested 1 turn from .*example\.jsonl: 1 new, 0 already stored\nnote: 1 imported session ended more than 30 days ago/);

    // the first guess of a new user: no session_id
    writeFileSync(file, '{"role":"user","content":"hello"}\n');
    const bad = await cli(['ingest', file]);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /example\.jsonl:1: .*session_id/);
  });

  it('retrieve --meta/--roles/--filters: the filters reach every tier, and results carry metadata', async () => {
    const file = join(dir, 'mixed.jsonl');
    const lines = [
      ...[0, 1, 2, 3, 4, 5].map((i) => ({ user_id: 'fay', session_id: 'chat', role: 'user', content: `the garden shed key note ${i}`, importance: 0.9, metadata: { source: 'chat' } })),
      ...[0, 1, 2].map((i) => ({ user_id: 'fay', session_id: 'mail', role: 'assistant', content: `shed key reminder ${i}`, importance: 0.9, metadata: { source: 'email', year: 2024 } })),
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal((await cli(['ingest', file, '--wait'])).code, EXIT.ok);
    const r = await cli(['retrieve', 'garden shed key', '--user', 'fay', '--top-k', '2', '--meta', 'source=email', '--roles', 'assistant', '--json']);
    assert.equal(r.code, EXIT.ok, r.stderr);
    const out = JSON.parse(r.stdout) as { results: Array<{ role: string; metadata: { source: string } }>; tiers: Record<string, { count: number }> };
    assert.equal(out.results.length, 2, 'top_k results although the unfiltered best are all chat turns');
    assert.ok(out.results.every((x) => x.role === 'assistant' && x.metadata.source === 'email'));
    assert.equal(out.tiers.semantic!.count, 3);
    assert.equal(out.tiers.long_term!.count, 3);
    const typed = await cli(['retrieve', 'shed key', '--user', 'fay', '--filters', '{"metadata":{"year":{"in":[2023,2024]}}}', '--json']);
    assert.equal(JSON.parse(typed.stdout).results.length, 3);
    const bad = await cli(['retrieve', 'shed', '--user', 'fay', '--filters', '{"colour":"red"}']);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /filters.*colour/);
    assert.equal(bad.stdout, '');
  });

  it('exit codes follow one table: unknown things exit 1 with the reason, bad usage 2, and nothing-to-do is not a success', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['memory', 'edit', 'no-such-id', '--importance', '0.5'], EXIT.failure, /^neuralcleave: memory no-such-id\b.*not found\n$/],
      [['memory', 'delete', 'no-such-id', '--yes'], EXIT.failure, /^neuralcleave: memory no-such-id\b.*not found\n$/],
      [['memory', 'forget', '--user', 'nobody', '--yes'], EXIT.failure, /^neuralcleave: nothing stored for user "nobody": nothing was erased\n$/],
      [['memory', 'clear', '--session', 'nope', '--user', 'fay', '--yes'], EXIT.failure, /nothing stored for session "nope" of user "fay"/],
      [['memory', 'compact', '--session', 'nope', '--user', 'fay'], EXIT.failure, /^neuralcleave: no session "nope" of user "fay" is stored: nothing to compact\n$/],
      [['memory', 'list', '--limit', 'many'], EXIT.usage, /--limit must be an integer/],
      [['retrieve', 'x'], EXIT.usage, /--user is required/],
      [['no-such-command'], EXIT.usage, /unknown command/],
    ];
    for (const [args, code, stderr] of cases) {
      const r = await cli(args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, stderr, args.join(' '));
      assert.equal(r.stdout, '', `${args.join(' ')} prints nothing on stdout`);
    }
    assert.match(README, /\| 0 \| done \|\n\| 1 \| it ran but could not do it/, 'the README has the table');
  });

  it('memory users and memory sessions list what is stored, in the right number', async () => {
    const users = await cli(['memory', 'users']);
    assert.equal(users.code, EXIT.ok, users.stderr);
    assert.match(users.stdout, /^fay {2}2 sessions, 9 turns, 9 long-term entries, last \S+\n/m);
    assert.match(users.stdout, /^alice {2}1 session, 1 turn, 1 long-term entry, last 2024-05-02T18:30:00\.000Z\n/m);
    const sessions = await cli(['memory', 'sessions', '--user', 'fay', '--json']);
    assert.deepEqual((JSON.parse(sessions.stdout) as Array<{ session_id: string }>).map((x) => x.session_id).sort(), ['chat', 'mail']);
  });

  it('stderr holds lines for a person, never JSON log records between them', async () => {
    // a model that cannot load: the warning a new user meets first, with the way out
    const r = await cli(['retrieve', 'garden', '--user', 'fay'], { NEURALCLEAVE_EMBEDDING_MODEL: 'acme/missing-model', NEURALCLEAVE_MODEL_DIR: join(dir, 'no-models') });
    assert.equal(r.code, EXIT.ok, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.ok(lines.length > 0);
    assert.deepEqual(lines.filter(isJsonLine), [], r.stderr);
    assert.match(r.stderr, /^neuralcleave: warning: embedding model could not be loaded.*embedding_model = "hash"/m);
  });

  it('doctor and /health give one verdict, with the way out, when the model cannot be loaded', async () => {
    const broken = { NEURALCLEAVE_EMBEDDING_MODEL: 'acme/missing-model', NEURALCLEAVE_MODEL_DIR: join(dir, 'no-models') };
    const doctor = await cli(['doctor'], broken);
    assert.equal(doctor.code, EXIT.failure, 'degraded is not a passed check');
    assert.match(doctor.stdout, /^status {6}degraded\n {2}embedder failed: .*embedding_model = "hash"/);
    assert.match(doctor.stdout, /\n {2}semantic failed: no embedder is loaded/);
    assert.doesNotMatch(doctor.stdout, /semantic +embedded \(ok\)/, 'never "ok" beside a failed embedder');
    const json = JSON.parse((await cli(['doctor', '--json'], broken)).stdout) as { status: string; problems: unknown[] };

    const serve = await startCli(['serve', '--port', '0'], { ...env, ...broken }, /listening on (http:\/\/\S+)/);
    try {
      const health = (await (await fetch(`${serve.match[1]}/health`)).json()) as { status: string; problems: unknown[] };
      assert.equal(health.status, json.status);
      assert.deepEqual(health.problems, json.problems, 'the same problems and advice in both');
    } finally {
      await stop(serve.child);
    }
    const ok = await cli(['doctor']);
    assert.equal(ok.code, EXIT.ok, ok.stdout);
    assert.match(ok.stdout, /^status {6}ok\n/);
  });

  it('serve --port/--host, and a port in use is named with the way out', async () => {
    const port = await freePort();
    const serve = await startCli(['serve', '--port', String(port), '--host', '127.0.0.1'], env, /listening on (http:\/\/\S+)/);
    try {
      assert.equal(serve.match[1], `http://127.0.0.1:${port}`);
      const second = await cli(['serve', '--port', String(port)]);
      assert.equal(second.code, EXIT.failure);
      assert.match(second.stderr, new RegExp(`neuralcleave: 127\\.0\\.0\\.1:${port} is already in use .*--port N`));
      assert.deepEqual(second.stderr.split('\n').filter(isJsonLine).filter((l) => !l.includes('"level":30')), [], 'no error records, only the reason');
    } finally {
      await stop(serve.child);
    }
    const bad = await cli(['serve', '--port', '70000']);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /--port must be an integer from 0 to 65535/);
  });

  it('a restart re-enqueues unfinished turns and says so once', async () => {
    // turns accepted by a process that stopped before its jobs ran: ingest without workers is not a thing,
    // so mark them unfinished in the file as a kill would leave them
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(env.NEURALCLEAVE_SQLITE_PATH);
    db.prepare('UPDATE turns SET persisted_at = NULL, embedded_with = NULL').run();
    db.close();
    const serve = await startCli(['serve', '--port', '0'], env, /listening on/);
    try {
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      await stop(serve.child);
    }
    const said = serve.output().split('\n').filter((l) => l.includes('re-enqueued'));
    assert.equal(said.length, 1, serve.output());
  });

  it('SIGTERM to `npm start` stops the node process that serves', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], { cwd: ROOT, env: { ...process.env, ...env, NEURALCLEAVE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 30_000;
    while (!out.includes('listening on') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.match(out, /listening on/);
    // the process that logs "neuralcleave serving" is the one npm started (the primary, with --processes)
    const pid = Number(/"pid":(\d+)[^\n]*"msg":"neuralcleave serving"/.exec(out)?.[1]);
    assert.ok(pid > 0, out);
    const exited = new Promise((r) => npm.once('exit', r));
    npm.kill('SIGTERM');
    await exited;
    const gone = Date.now() + 10_000;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    while (alive() && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(), false, `node (pid ${pid}) still running after SIGTERM to npm start`);
    // and the port is free again
    await new Promise<void>((resolve, reject) => {
      const probe = createServer().once('error', reject).listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
  });
});

describe('archival of back-filled history (the documented choice: by when the turns say they were said)', () => {
  it('history ingested with old created_at is archived by the next run; history of the last days is not', async () => {
    const dir = tmpDir();
    const env = { NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'), NEURALCLEAVE_EMBEDDING_MODEL: 'hash', NEURALCLEAVE_LOG_LEVEL: 'warn' };
    const file = join(dir, 'history.jsonl');
    const at = (daysAgo: number, i: number) => new Date(Date.now() - daysAgo * 86_400_000 + i * 60_000).toISOString();
    const turns = [
      ...[0, 1, 2].map((i) => ({ user_id: 'gus', session_id: 'last-year', role: 'user', content: `old trip note ${i} about Lisbon trams`, importance: 0.9, created_at: at(400, i) })),
      ...[0, 1, 2].map((i) => ({ user_id: 'gus', session_id: 'last-week', role: 'user', content: `recent note ${i} about Porto bridges`, importance: 0.9, created_at: at(7, i) })),
    ];
    writeFileSync(file, turns.map((t) => JSON.stringify(t)).join('\n'));
    assert.equal((await runCli(['ingest', file, '--wait'], env)).code, 0);
    const dry = await runCli(['memory', 'archive', '--dry-run', '--json'], env);
    assert.equal(dry.code, 0, dry.stderr);
    const sessions = (JSON.parse(dry.stdout) as { sessions: Array<{ session_id: string; status: string }> }).sessions;
    assert.deepEqual(sessions.map((s) => [s.session_id, s.status]), [['last-year', 'would_archive']]);
    const run = await runCli(['memory', 'archive'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /archived 1 session inactive since before/);
    assert.match(README, /\*\*Back-filled history\.\*\* A session's age is the time of its last turn as the turns say it/);
  });
});
