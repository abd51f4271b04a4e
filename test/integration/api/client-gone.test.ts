// A client of POST /memory/retrieve (the hot node:http route, and the Express route behind it) or of
// POST /chat that closes its connection before the answer: the retrieval pass stops (its slow tier sees
// its signal aborted by the client's leaving, long before its budget), its later stages are not run,
// the LLM is not asked, and nothing is logged at error level.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { RequestAbortedError } from '../../../src/errors.js';
import type { ListOptions, TextHit } from '../../../src/ports/long-term.js';
import { startFakeOllama, type FakeLlm } from '../../helpers/fake-llm.js';
import { startApi, turn, type Api } from './harness.js';

const ADMIN = 'gone-admin-key-0123456789abcdef';
/** budgets the test never reaches: an abort the slow tier sees is the client's, never a budget's */
const BUDGETS = { short_term_budget_ms: 20_000, semantic_budget_ms: 20_000, long_term_budget_ms: 20_000 };
/** how long the slow long-term search holds its answer when nobody aborts it */
const SLOW_MS = 2_000;

interface Side {
  api: Api;
  lines: Array<Record<string, any>>;
  /** the slow long-term search of the last request: its signal, once it was called, and whether that aborted */
  slow: { entered: Promise<void>; signal?: AbortSignal; aborted: Promise<boolean> };
  /** prompt blocks built (the pass's last stage) */
  promptBlocks: number;
  /** tier reports (after the tiers answered) */
  tierReports: number;
}

async function side(options: { expressOnly?: boolean; config?: Record<string, unknown> } = {}): Promise<Side> {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, any>) });
  const api = await startApi({ api_keys: [{ key: ADMIN, users: ['*'] }], log_level: 'debug', ...BUDGETS, ...options.config }, { logger, expressOnly: options.expressOnly ?? false, reconcile: false });
  const s: Side = { api, lines, slow: undefined as never, promptBlocks: 0, tierReports: 0 };
  armSlow(s);
  // the long-term store the retriever reads (the same object as the services'): its text search is slow
  // and watches its signal, as the SQLite and PostgreSQL stores do for work not started
  const longTerm = api.services.longTerm;
  const searchText = longTerm.searchText.bind(longTerm);
  longTerm.searchText = async (userId: string, query: string, o: ListOptions): Promise<TextHit[]> => {
    if (userId !== 'slow') return searchText(userId, query, o);
    const slow = s.slow as Side['slow'] & { enter(): void; settle(aborted: boolean): void };
    slow.signal = o.signal;
    slow.enter();
    const aborted = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), SLOW_MS);
      o.signal?.addEventListener('abort', () => {
        clearTimeout(t);
        resolve(true);
      }, { once: true });
    });
    slow.settle(aborted);
    if (aborted) throw o.signal!.reason;
    return searchText(userId, query, o);
  };
  const retriever = api.services.retriever;
  const promptBlocks = retriever.promptBlocks.bind(retriever);
  retriever.promptBlocks = (results) => {
    s.promptBlocks++;
    return promptBlocks(results);
  };
  api.services.events.tier.add(() => void s.tierReports++);
  return s;
}

function armSlow(s: Side): void {
  let enter!: () => void;
  let settle!: (aborted: boolean) => void;
  const entered = new Promise<void>((r) => (enter = r));
  const aborted = new Promise<boolean>((r) => (settle = r));
  s.slow = Object.assign({ entered, aborted }, { enter, settle });
}

/** POSTs `body` and closes the connection once the slow tier has been entered; resolves when the socket is closed */
async function leaveDuringPass(s: Side, path: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  armSlow(s);
  const text = JSON.stringify(body);
  const url = new URL(s.api.base + path);
  const req = httpRequest({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
  });
  let answered = false;
  req.on('response', () => (answered = true));
  req.on('error', () => {});
  req.end(text);
  await s.slow.entered;
  await new Promise<void>((resolve) => {
    req.socket!.once('close', () => resolve());
    req.destroy();
  });
  assert.equal(answered, false, 'the client left before any answer');
}

/** waits for the slow tier to settle, at most `ms`: true when it saw its signal aborted */
async function slowTierAborted(s: Side, ms: number): Promise<boolean | 'still waiting'> {
  return Promise.race([s.slow.aborted, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

function checkLogs(s: Side, from: number, route: string): void {
  const lines = s.lines.slice(from);
  const errors = lines.filter((l) => l.level >= 50);
  assert.deepEqual(errors.map((l) => l.msg), [], 'nothing logged at error level');
  assert.ok(!lines.some((l) => l.level >= 40 && l.msg === 'tier skipped for this retrieval'), 'no tier reported as skipped');
  const request = lines.find((l) => l.component === 'http' && l.req?.route === route && l.level === 30);
  assert.equal(request?.msg, 'request aborted', 'the request line says the client left');
  const left = lines.find((l) => l.client_left === true);
  assert.ok(left, 'a line says the client left');
  assert.equal(left.level, 20, 'at debug level');
  assert.equal(left.req?.route, route, 'with the route');
  assert.ok(!JSON.stringify(lines).includes('honey'), 'no user text logged');
}

describe('a client that closes its connection before the answer', () => {
  let hot: Side;
  let express: Side;
  let withLlm: Side;
  let ollama: FakeLlm;
  before(async () => {
    ollama = await startFakeOllama();
    [hot, express, withLlm] = await Promise.all([side(), side({ expressOnly: true }), side({ config: { llm_provider: 'ollama', llm_base_url: ollama.url } })]);
    for (const s of [hot, express, withLlm]) {
      const r = await s.api.request('POST', '/sessions/hive/turns', { key: ADMIN, body: { turns: [turn('The bees made honey this summer.', { user_id: 'slow' }), turn('I keep the hives on the balcony.', { user_id: 'slow' })] } });
      assert.equal(r.status, 202, r.text);
      await s.api.memory.idle();
    }
  });
  after(async () => {
    await Promise.all([hot.api.close(), express.api.close(), withLlm.api.close()]);
    await ollama.close();
  });

  const query = { query: 'where is the honey from', user_id: 'slow', session_id: 'hive' };

  it('a retrieve answered in full when the client stays (the slow tier and the counters are sound)', async () => {
    for (const s of [hot, express]) {
      armSlow(s);
      const [blocks, reports] = [s.promptBlocks, s.tierReports];
      const r = await s.api.request('POST', '/memory/retrieve', { key: ADMIN, body: query });
      assert.equal(r.status, 200, r.text);
      assert.equal(await s.slow.aborted, false, 'nobody aborted the slow tier');
      assert.equal(r.json.tiers.long_term.status, 'ok');
      assert.equal(s.promptBlocks - blocks, 1);
      assert.equal(s.tierReports - reports, 3);
    }
  });

  for (const [name, pick] of [['the hot node:http route', () => hot], ['the Express route', () => express]] as const) {
    it(`POST /memory/retrieve on ${name}: the pass stops, its later stages are not run, no error is logged`, async () => {
      const s = pick();
      const from = s.lines.length;
      const [blocks, reports] = [s.promptBlocks, s.tierReports];
      // which side answers: the hot route never hands this request to Express
      const app = s.api.app as unknown as { handle: (...args: unknown[]) => unknown };
      const handle = app.handle;
      let toExpress = 0;
      app.handle = (...args: unknown[]) => ((toExpress++), handle.apply(app, args));
      const left = performance.now();
      try {
        await leaveDuringPass(s, '/memory/retrieve', query);
      } finally {
        app.handle = handle;
      }
      assert.equal(toExpress, s === hot ? 0 : 1, 'answered by the route named');
      const aborted = await slowTierAborted(s, SLOW_MS / 2);
      assert.equal(aborted, true, `the slow tier saw its signal aborted within ${SLOW_MS / 2} ms of the client leaving (budget 20 s)`);
      assert.ok(s.slow.signal!.reason instanceof RequestAbortedError, "aborted by the client's leaving, not a budget");
      assert.ok(performance.now() - left < SLOW_MS, 'long before the slow tier would have answered');
      // what would have followed had the pass gone on
      await settle(SLOW_MS + 200);
      assert.equal(s.tierReports - reports, 0, 'no tier reported: the pass stopped after the tiers');
      assert.equal(s.promptBlocks - blocks, 0, 'no prompt blocks built');
      checkLogs(s, from, '/memory/retrieve');
    });
  }

  it('POST /mcp, the retrieve tool: the pass stops, and no error is logged', async () => {
    const s = hot;
    const from = s.lines.length;
    const [blocks, reports] = [s.promptBlocks, s.tierReports];
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'retrieve', arguments: query } };
    await leaveDuringPass(s, '/mcp', call, { accept: 'application/json, text/event-stream' });
    assert.equal(await slowTierAborted(s, SLOW_MS / 2), true, 'the slow tier saw its signal aborted');
    await settle(SLOW_MS + 200);
    assert.equal(s.tierReports - reports, 0, 'no tier reported');
    assert.equal(s.promptBlocks - blocks, 0, 'no prompt blocks built');
    assert.deepEqual(s.lines.slice(from).filter((l) => l.level >= 50).map((l) => l.msg), [], 'nothing logged at error level');
  });

  it('POST /chat: the retrieval stops and the LLM is not asked', async () => {
    const s = withLlm;
    const sound = await s.api.request('POST', '/chat', { key: ADMIN, body: { session_id: 'hive', user_id: 'other', message: 'hello' } });
    assert.equal(sound.status, 200, `a chat with a client that stays asks the LLM: ${sound.text}`);
    const calls = ollama.chats().length;
    const from = s.lines.length;
    const blocks = s.promptBlocks;
    await leaveDuringPass(s, '/chat', { session_id: 'hive', user_id: 'slow', message: 'where is the honey from' });
    assert.equal(await slowTierAborted(s, SLOW_MS / 2), true, 'the slow tier saw its signal aborted');
    assert.ok(s.slow.signal!.reason instanceof RequestAbortedError);
    await settle(SLOW_MS + 200);
    assert.equal(s.promptBlocks - blocks, 0, 'no prompt built');
    assert.equal(ollama.chats().length, calls, 'the LLM was not asked');
    assert.deepEqual(await s.api.services.turnLog.session('slow', 'hive').then((t) => t.filter((x) => x.role === 'assistant')), [], 'nothing written');
    checkLogs(s, from, '/chat');
  });
});
