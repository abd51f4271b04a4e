import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { CLI, runCli, type RunResult } from '../../helpers/cli.js';
import { isSummaryRequest, startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { freePort } from '../../helpers/redis.js';
import { tmpDir } from '../../helpers/tmp.js';

/** `script` from util-linux gives the child a pseudo-terminal; without it the pty test is skipped */
const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

/** Runs a command line under a pseudo-terminal, typing `input` into it; killed after `timeoutMs`. */
function underPty(command: string, env: Record<string, string>, input: string, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // a chat that never exits must fail the test, not hang the suite
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('neuralcleave chat and memory compact (the built CLI, a fake Ollama)', () => {
  const dir = tmpDir();
  let ollama: FakeLlm;
  let env: Record<string, string>;
  before(async () => {
    ollama = await startFakeOllama();
    env = {
      NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'),
      NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
      NEURALCLEAVE_LOG_LEVEL: 'warn',
      NEURALCLEAVE_LLM_PROVIDER: 'ollama',
      NEURALCLEAVE_LLM_BASE_URL: ollama.url,
      NEURALCLEAVE_COMPACTION_KEEP_TURNS: '1',
    };
  });
  after(() => ollama.close());

  it('chats from piped stdin: replies, /why, /compact, /exit', async () => {
    const input = ['My name is Ada and I keep bees in Porto.', '/why', 'Where do I keep bees?', '/why', '/compact', '/exit', 'never sent'].join('\n');
    const r = await runCli(['chat', '--session', 's1', '--user', 'ada'], env, `${input}\n`);
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('\n');
    assert.equal(out[0], 'assistant> You said: My name is Ada and I keep bees in Porto.');
    assert.equal(out[1], 'the last message retrieved no memories');
    assert.equal(out[2], 'assistant> You said: Where do I keep bees?');
    assert.match(out[3]!, /^memories retrieved for the last message \(\d+\):$/);
    assert.match(r.stdout, /\d\. \[short_term \d\.\d{3}\] user, \d{4}-\d\d-\d\d: My name is Ada and I keep bees in Porto\.\n {3}similarity .*, bm25 .*, ranks .*short_term#\d.*, fusion .*, tier priority .*, recency .*, importance /);
    assert.match(r.stdout, /compacted session s1: 3 turns summarized by llm:ollama\/llama3\.2 into summary~\S+; 1 turn kept verbatim/);
    assert.ok(!ollama.chats().some((q) => JSON.stringify(q.body).includes('never sent')), 'nothing after /exit is sent');
    assert.equal(ollama.chats().filter(isSummaryRequest).length, 1);

    const db = new Database(env.NEURALCLEAVE_SQLITE_PATH!, { readonly: true });
    try {
      const turns = db.prepare("SELECT role, content FROM turns WHERE user_id = 'ada' AND session_id = 's1' ORDER BY created_at").all() as Array<{ role: string; content: string }>;
      assert.deepEqual(turns.map((t) => t.role), ['user', 'assistant', 'user', 'assistant']);
      const summary = db.prepare("SELECT covers FROM entries WHERE kind = 'summary' AND session_id = 's1'").get() as { covers: string };
      assert.equal(JSON.parse(summary.covers).length, 3);
    } finally {
      db.close();
    }
  });

  it('memory compact --session summarizes from the turn log in a new process', async () => {
    const chat = await runCli(['chat', '--session', 's2', '--user', 'ada'], env, 'I have 3 hives.\nThey produce 40 kg of honey a year.\n');
    assert.equal(chat.code, 0, chat.stderr);
    const r = await runCli(['memory', 'compact', '--session', 's2', '--user', 'ada', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { status: string; source: string; summarized: number; summary_id: string; summary: string };
    assert.equal(result.status, 'compacted');
    assert.equal(result.source, 'turn_log', "this process's short-term tier is empty; the turn log holds the session");
    assert.equal(result.summarized, 3);
    const list = await runCli(['memory', 'list', '--user', 'ada', '--session', 's2', '--json'], env);
    const entries = JSON.parse(list.stdout) as Array<{ id: string; kind: string }>;
    assert.ok(entries.some((e) => e.id === result.summary_id && e.kind === 'summary'));
    const again = await runCli(['memory', 'compact', '--session', 's2', '--user', 'ada'], env);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /^nothing to compact in session s2/);
  });

  it('with piped input, a message the LLM could not answer makes the exit code 1, and /why still shows what was retrieved', async () => {
    const port = await freePort();
    const r = await runCli(['chat', '--session', 's2', '--user', 'ada'], { ...env, NEURALCLEAVE_LLM_BASE_URL: `http://127.0.0.1:${port}` }, 'how many hives do I have?\n/why\n');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error: ollama at http:\/\/127\.0\.0\.1:\d+ is not reachable/);
    assert.match(r.stdout, /^memories retrieved for the last message \(\d+\):\n1\. \[\w+ \d\.\d{3}\] .*hives/m);
  });

  it('with no LLM configured: retrieval only, says so, shows what would be injected, writes nothing', async () => {
    const r = await runCli(['chat', '--session', 's4', '--user', 'ada'], { ...env, NEURALCLEAVE_LLM_PROVIDER: 'none' }, 'how much honey do the hives make?\n/why\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no LLM is configured .*: retrieval only/);
    assert.match(r.stdout, /^memory> would inject \d+ memor(y|ies):\n/);
    assert.match(r.stdout, /40 kg of honey/);
    assert.match(r.stdout, /memories retrieved for the last message/);
    const db = new Database(env.NEURALCLEAVE_SQLITE_PATH!, { readonly: true });
    try {
      assert.equal((db.prepare("SELECT count(*) AS n FROM turns WHERE session_id = 's4'").get() as { n: number }).n, 0, 'nothing written');
    } finally {
      db.close();
    }
  });

  it('chat --no-llm: retrieval only even with an LLM configured; the LLM is never asked', async () => {
    const before = ollama.chats().length;
    const r = await runCli(['chat', '--session', 's5', '--user', 'nobody-yet', '--no-llm'], env, 'anything there?\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'memory> nothing to inject\n');
    assert.equal(r.stderr, '');
    assert.equal(ollama.chats().length, before);
  });

  it('works under a pseudo-terminal: a prompt, replies, /exit', { skip: HAS_SCRIPT ? false : 'util-linux script is not installed' }, async () => {
    const r = await underPty(`${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} chat --session p1 --user newcomer`, env, 'hello there\n/why\n/exit\n');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /chat — session p1, user newcomer; llm: ollama llama3\.2/, 'the banner of an interactive session');
    assert.match(r.stdout, /you> /, 'a prompt');
    assert.match(r.stdout, /assistant> You said: hello there/);
    assert.match(r.stdout, /the last message retrieved no memories/);
  });
});
