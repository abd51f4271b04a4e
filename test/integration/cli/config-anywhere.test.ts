import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { runCli } from '../../helpers/cli.js';
import { tmpDir } from '../../helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** One neuralcleave.toml, written by `init`, found by every process from any folder (issue 27, item 3). */
describe('one configuration file, found from anywhere', () => {
  const home = tmpDir('nc-home-');
  const project = join(home, 'project');
  const deeper = join(project, 'docs', 'notes');
  mkdirSync(deeper, { recursive: true });
  // no HOME: no user config folder of this machine leaks in
  const bare: Record<string, string> = {};
  const turns = join(home, 'turns.jsonl');
  writeFileSync(turns, '{"user_id":"alice","session_id":"s1","role":"user","content":"My sister Ana is a nurse in Porto.","created_at":"2024-05-02T18:30:00Z"}\n');

  it('--version prints the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], bare);
      assert.equal(r.code, EXIT.ok, r.stderr);
      assert.equal(r.stdout, `${VERSION}\n`);
    }
  });

  it('init --offline writes a commented file; a second init refuses to overwrite it', async () => {
    const r = await runCli(['init', '--offline'], bare, undefined, project);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.match(r.stdout, new RegExp(`wrote ${join(project, 'neuralcleave.toml')}`));
    const text = readFileSync(join(project, 'neuralcleave.toml'), 'utf8');
    assert.match(text, /^embedding_model = "hash"$/m);
    assert.match(text, /^# /m, 'commented');
    const again = await runCli(['init'], bare, undefined, project);
    assert.equal(again.code, EXIT.usage);
    assert.match(again.stderr, /exists; --force replaces it/);
  });

  it('a read-only command before anything is stored says where it looked and creates no database', async () => {
    for (const args of [['memory', 'users'], ['memory', 'list', '--user', 'alice'], ['retrieve', 'sister', '--user', 'alice'], ['export', '--user', 'alice']]) {
      const r = await runCli(args, bare, undefined, deeper);
      assert.equal(r.code, EXIT.failure, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`no database at ${join(project, 'data', 'neuralcleave.db')}.*configuration: ${join(project, 'neuralcleave.toml')}`));
      assert.equal(r.stdout, '');
    }
    assert.equal(existsSync(join(project, 'data')), false, 'no folder, no empty database');
    assert.equal(existsSync(join(deeper, 'data')), false, 'nothing in the working folder either');
  });

  it('doctor before anything is stored reports where it looked and creates no database', async () => {
    const db = join(project, 'data', 'neuralcleave.db');
    for (const args of [['doctor'], ['doctor', '--repair']]) {
      const r = await runCli(args, bare, undefined, deeper);
      assert.equal(r.code, EXIT.failure, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^status +no database: nothing is stored at ${db} yet`, 'm'));
      assert.match(r.stdout, new RegExp(`^config +${join(project, 'neuralcleave.toml')} `, 'm'));
      assert.match(r.stdout, new RegExp(`^sqlite +${db} — does not exist`, 'm'));
    }
    const json = await runCli(['doctor', '--json'], bare, undefined, deeper);
    assert.equal(json.code, EXIT.failure);
    const report = JSON.parse(json.stdout) as { status: string; config_file: string; sqlite: { path: string; exists: boolean } };
    assert.deepEqual([report.status, report.config_file, report.sqlite.path, report.sqlite.exists], ['no_database', join(project, 'neuralcleave.toml'), db, false]);
    assert.equal(existsSync(join(project, 'data')), false, 'no folder, no empty database');
    assert.equal(existsSync(join(deeper, 'data')), false, 'nothing in the working folder either');
  });

  it('a command in a subfolder uses the file above it, with its paths read against the file\'s folder', async () => {
    const r = await runCli(['ingest', turns, '--wait'], bare, undefined, deeper);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.ok(existsSync(join(project, 'data', 'neuralcleave.db')), 'the database is beside the file');
    assert.equal(existsSync(join(deeper, 'data')), false, 'not in the working folder');
    assert.doesNotMatch(r.stderr, /embedding model could not be loaded/, 'the file\'s hash embedder, not the default model');
  });

  it('from an unrelated folder, NEURALCLEAVE_CONFIG and --config reach the same database', async () => {
    const file = join(project, 'neuralcleave.toml');
    const viaEnv = await runCli(['memory', 'users'], { NEURALCLEAVE_CONFIG: file }, undefined, '/');
    assert.equal(viaEnv.code, EXIT.ok, viaEnv.stderr);
    assert.match(viaEnv.stdout, /^alice {2}1 session, 1 turn/m);
    const viaFlag = await runCli(['--config', file, 'retrieve', 'sister job', '--user', 'alice', '--json'], bare, undefined, home);
    assert.equal(viaFlag.code, EXIT.ok, viaFlag.stderr);
    assert.match((JSON.parse(viaFlag.stdout) as { results: Array<{ content: string }> }).results[0]!.content, /nurse in Porto/);
  });

  it('a user config folder is found last, from anywhere without a file of its own', async () => {
    const xdg = join(home, 'xdg');
    const init = await runCli(['init', '--offline', '--user-folder'], { XDG_CONFIG_HOME: xdg }, undefined, home);
    assert.equal(init.code, EXIT.ok, init.stderr);
    const r = await runCli(['doctor'], { XDG_CONFIG_HOME: xdg }, undefined, '/');
    assert.match(r.stdout, new RegExp(`^config +${join(xdg, 'neuralcleave', 'neuralcleave.toml')} \\(found in the user config folder\\)$`, 'm'));
    assert.match(r.stdout, new RegExp(`^sqlite +${join(xdg, 'neuralcleave', 'data', 'neuralcleave.db')} `, 'm'));
    assert.equal(existsSync(join(xdg, 'neuralcleave', 'data')), false, 'doctor created no database');
  });

  it('--help and doctor say which file and which database are in use', async () => {
    const help = await runCli(['memory', 'list', '--help'], bare, undefined, deeper);
    assert.equal(help.code, EXIT.ok, help.stderr);
    assert.match(help.stdout, new RegExp(`configuration: ${join(project, 'neuralcleave.toml')} \\(found in the folder above the current one\\)`));
    assert.match(help.stdout, new RegExp(`database: +SQLite ${join(project, 'data', 'neuralcleave.db')}\\n`));
    const doctor = await runCli(['doctor'], bare, undefined, deeper);
    assert.match(doctor.stdout, new RegExp(`^config +${join(project, 'neuralcleave.toml')} `, 'm'));
    assert.match(doctor.stdout, new RegExp(`^sqlite +${join(project, 'data', 'neuralcleave.db')} `, 'm'));
    const none = await runCli(['--help'], bare, undefined, '/');
    assert.match(none.stdout, /configuration: none \(looked for \/neuralcleave\.toml and the folders above it/);
  });

  it('memory list without --user says whose memories it looked at and how to name another user', async () => {
    const r = await runCli(['memory', 'list'], bare, undefined, project);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.match(r.stderr, /no entries for user "default" \(no --user given; `neuralcleave memory users` lists the users/);
  });

  it('export prints no progress lines when stderr is not a terminal', async () => {
    const out = join(home, 'alice.jsonl');
    const r = await runCli(['export', '--user', 'alice', out], bare, undefined, project);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.equal(r.stderr, `exported 2 records of user "alice" to ${out}\n`, 'the summary only, no "export: n/N" lines');
    assert.ok(existsSync(out));
  });
});

describe("the README's MCP config, started by an assistant with cwd /", () => {
  const dir = tmpDir('nc-mcp-readme-');
  let transport: StdioClientTransport | null = null;
  after(() => transport?.close());

  it('runs from / with the config file the README names, and --user keeps it to its user with a reason that says why', async () => {
    const block = /```json\n(\{\n {2}"mcpServers"[^`]*?"mcp", "--user"[^`]*?)```/.exec(README);
    assert.ok(block, 'the README shows a stdio MCP config');
    assert.equal((await runCli(['init', '--offline'], {}, undefined, dir)).code, EXIT.ok);
    // the README's placeholders: the clone, and the config file `init` wrote in it
    const text = block[1]!.replaceAll('/path/to/neuralcleave/neuralcleave.toml', join(dir, 'neuralcleave.toml')).replaceAll('/path/to/neuralcleave/', ROOT);
    const server = (JSON.parse(text) as { mcpServers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> }).mcpServers.memory!;
    transport = new StdioClientTransport({
      command: server.command === 'node' ? process.execPath : server.command,
      args: server.args,
      env: { PATH: process.env.PATH ?? '', ...server.env },
      cwd: '/',
      stderr: 'pipe',
    });
    const client = new Client({ name: 'readme', version: '1.0.0' });
    await client.connect(transport);
    const user = server.args[server.args.indexOf('--user') + 1]!;
    const added = (await client.callTool({ name: 'add_turns', arguments: { session_id: 'trip', turns: [{ role: 'user', content: 'My sister Ana is a dentist in Porto.' }] } })) as { isError?: boolean };
    assert.ok(!added.isError, JSON.stringify(added));
    assert.ok(existsSync(join(dir, 'data', 'neuralcleave.db')), "the database is beside the config file, not under the assistant's cwd");
    const other = (await client.callTool({ name: 'retrieve', arguments: { query: 'sister', user_id: 'someone-else' } })) as { isError?: boolean; content: Array<{ text: string }> };
    assert.equal(other.isError, true);
    assert.match(other.content[0]!.text, new RegExp(`^forbidden: this MCP server \\(started with --user ${user}\\) may not touch the memories of user "someone-else"`));
    await client.close();
    transport = null;
    const users = await runCli(['memory', 'users'], { NEURALCLEAVE_CONFIG: join(dir, 'neuralcleave.toml') });
    assert.match(users.stdout, new RegExp(`^${user} {2}1 session, 1 turn`, 'm'));
  });
});
