// Token counting on the inputs that stalled js-tiktoken's encode (issue 25; test/fixtures/token-worst.ts):
// 32,000 characters — the longest message or turn the API accepts — of one repeated character (x,
// U+200B, a tab, a space, a newline, an emoji, a CJK ideograph) and of text whose every piece is new
// (base64, random letters), each counted by a fresh TokenCounter (empty caches; the rank table is built once per process,
// before the first row). Baseline: 32,000 characters of English chat text, counted the same way in the
// same run. Then the same worst inputs as `POST /chat` messages to a `neuralcleave serve` child (hash
// embedder, a fake Ollama of this process answering with an echo, so the reply is as long and is
// counted too), while GET /health is polled every 10 ms: the slowest /health answer is how long the
// server's event loop was held. Then each input, and two words of 2,000 pieces ("a-a-…", "a'a'…")
// stored as turns, asked as `POST /memory/retrieve` queries (their first 4,000 characters), polled the
// same way.
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
import { MAX_QUERY_CHARS } from '../../src/retrieval/request.js';
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

/** GET `path`: its status (a connection of its own) */
export function get(base: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${base}${path}`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * The slowest GET /health answer (polled every 10 ms) while `call` runs for each name in turn, and
 * the name it ran for: how long the server's event loop was held. A call answering other than 2xx fails.
 */
export async function slowestHealth(base: string, names: readonly string[], call: (name: string) => Promise<{ status: number; answer: string }>): Promise<{ worst: number; name: string }> {
  let worst = 0;
  let worstName = '';
  for (const name of names) {
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
    const { status, answer } = await call(name);
    done = true;
    await poller;
    await Promise.all(polls);
    if (status < 200 || status > 299) throw new Error(`${name} answered ${status}: ${answer.slice(0, 300)}`);
  }
  return { worst, name: worstName };
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
    let chats = 0;
    const chatted = await slowestHealth(base, Object.keys(inputs), async (name) => {
      const body = { user_id: 'bench', session_id: `tokens-${chats++}`, message: inputs[name]! };
      let { status, text: answer } = await post(base, '/chat', body);
      // the fake's idle keep-alive socket, closed as the server reused it: asked once more
      if (status === 503 && answer.includes('other side closed')) ({ status, text: answer } = await post(base, '/chat', body));
      return { status, answer };
    });
    report.add({
      section: 'tokens',
      metric: 'GET /health, slowest answer while POST /chat carries each input above (serve, fake Ollama echoing it)',
      value: chatted.worst,
      unit: 'ms',
      target: '≤ 50 ms',
      met: chatted.worst <= 50,
      note: `slowest during ${chatted.name}`,
    });

    // the same inputs as queries (their first MAX_QUERY_CHARS) against the turns /chat stored, and
    // words of many pieces against a turn of the same: FTS5 read each as a phrase of thousands of tokens
    const queries: Record<string, string> = { ...inputs, 'a-a-… (one word of 2,000 pieces)': 'a-'.repeat(CHARS / 2), "a'a'… (one word of 2,000 pieces)": "a'".repeat(CHARS / 2) };
    for (const name of Object.keys(queries).filter((n) => !(n in inputs))) {
      const { status, text } = await post(base, '/sessions/pieces/turns', { user_id: 'bench', role: 'assistant', content: queries[name] });
      if (status !== 202) throw new Error(`writing ${name} answered ${status}: ${text.slice(0, 300)}`);
    }
    const retrieved = await slowestHealth(base, Object.keys(queries), async (name) => {
      const { status, text: answer } = await post(base, '/memory/retrieve', { user_id: 'bench', query: queries[name]!.slice(0, MAX_QUERY_CHARS), top_k: 8 });
      return { status, answer };
    });
    report.add({
      section: 'tokens',
      metric: `GET /health, slowest answer while POST /memory/retrieve asks each input above and two words of 2,000 pieces (first ${MAX_QUERY_CHARS.toLocaleString('en-US')} characters, against turns of the same)`,
      value: retrieved.worst,
      unit: 'ms',
      target: '≤ 50 ms',
      met: retrieved.worst <= 50,
      note: `slowest during ${retrieved.name}`,
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await ollama.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default section;
