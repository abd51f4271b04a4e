// Token counting on the inputs that stalled js-tiktoken's encode (issue 25; test/fixtures/token-worst.ts):
// 32,000 characters — the longest message or turn the API accepts — of one repeated character (x,
// U+200B, a tab, a space, a newline, an emoji, a CJK ideograph) and of text whose every piece is new
// (base64, random letters), each counted by a fresh TokenCounter (empty caches; the rank table is built once per process,
// before the first row). Baseline: 32,000 characters of English chat text, counted the same way in the
// same run. Then the same worst inputs as `POST /chat` messages to a `neuralcleave serve` child (hash
// embedder, a fake Ollama of this process answering with an echo, so the reply is as long and is
// counted too), while GET /health is polled every 10 ms: the slowest /health answer is how long the
// server's event loop was held.
// Takes: --quick (3 runs instead of 7). Adds rows to the report.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TokenCounter } from '../../src/compaction/tokens.js';
import { startFakeOllama } from '../../test/helpers/fake-llm.js';
import { MAX_CHARS as CHARS, worstInputs } from '../../test/fixtures/token-worst.js';
import type { Report, Section } from '../report.js';
import { ChatText } from './chat-text.js';
import { listeningPort } from './http.js';

/** median wall and CPU milliseconds of `runs` calls (CPU: this thread's user + system time, what the call itself costs on a loaded machine) */
function medianMs(runs: number, fn: () => void): { wall: number; cpu: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < runs; r++) {
    const c = process.cpuUsage();
    const t = performance.now();
    fn();
    wall.push(performance.now() - t);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
  return { wall: mid(wall), cpu: mid(cpu) };
}

function post(base: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = request(`${base}${path}`, { agent: false, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': data.length } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

function get(base: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${base}${path}`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

const section: Section = async (report: Report, { quick }) => {
  const runs = quick ? 3 : 7;
  new TokenCounter().count('builds the rank table before the first row');
  const chat = new ChatText(7);
  let prose = '';
  for (let i = 0; prose.length < CHARS; i++) prose += `${chat.turn(i).content} `;
  prose = prose.slice(0, CHARS);
  const baseline = medianMs(runs, () => new TokenCounter().count(prose));
  const inputs = worstInputs();
  for (const [name, text] of Object.entries(inputs)) {
    let tokens = 0;
    const ms = medianMs(runs, () => (tokens = new TokenCounter().count(text)));
    report.add({
      section: 'tokens',
      metric: `count tokens of ${name} (fresh counter)`,
      value: ms.wall,
      unit: 'ms',
      baseline: baseline.wall,
      baselineLabel: '32,000 chars of English chat text',
      ratio: baseline.wall / ms.wall,
      target: '≤ 50 ms',
      met: ms.wall <= 50,
      note: `${tokens.toLocaleString('en-US')} tokens; CPU ${ms.cpu.toFixed(1)} ms (baseline ${baseline.cpu.toFixed(1)} ms)`,
    });
  }

  // the same inputs through a server: /health polled while each /chat runs
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-tokens-'));
  const ollama = await startFakeOllama();
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const env = {
    PATH: process.env.PATH ?? '',
    NEURALCLEAVE_SQLITE_PATH: join(dir, 'nc.db'),
    NEURALCLEAVE_EMBEDDING_MODEL: 'hash',
    NEURALCLEAVE_LOG_LEVEL: 'info',
    NEURALCLEAVE_LLM_PROVIDER: 'ollama',
    NEURALCLEAVE_LLM_BASE_URL: ollama.url,
  };
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--processes', '1'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const base = `http://127.0.0.1:${await listeningPort(child, 'serve')}`;
    await get(base, '/health');
    let worst = 0;
    let worstName = '';
    let chats = 0;
    for (const [name, text] of Object.entries(inputs)) {
      let done = false;
      const polls: Promise<void>[] = [];
      const poller = (async () => {
        while (!done) {
          const t = performance.now();
          polls.push(
            get(base, '/health').then(() => {
              const ms = performance.now() - t;
              if (ms > worst) [worst, worstName] = [ms, name];
            }),
          );
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const body = { user_id: 'bench', session_id: `tokens-${chats++}`, message: text };
      let { status, text: answer } = await post(base, '/chat', body);
      // the fake's idle keep-alive socket, closed as the server reused it: asked once more
      if (status === 503 && answer.includes('other side closed')) ({ status, text: answer } = await post(base, '/chat', body));
      done = true;
      await poller;
      await Promise.all(polls);
      if (status !== 200) throw new Error(`POST /chat with ${name} answered ${status}: ${answer.slice(0, 300)}`);
    }
    report.add({
      section: 'tokens',
      metric: 'GET /health, slowest answer while POST /chat carries each input above (serve, fake Ollama echoing it)',
      value: worst,
      unit: 'ms',
      target: '≤ 50 ms',
      met: worst <= 50,
      note: `slowest during ${worstName}`,
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await ollama.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default section;
