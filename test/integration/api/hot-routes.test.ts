import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { BackendBusyError, BackendUnavailableError } from '../../../src/errors.js';
import { startApi, turn, type Api, type Reply, type RequestOptions } from './harness.js';

// The hot routes (src/api/hot-routes.ts: POST /sessions/:id/turns and POST /memory/retrieve on plain
// node:http) against the Express app alone, same config, same requests in the same order: every answer
// — status, body, the headers a client reads — every request log line and every latency sample must be
// the same.

const ADMIN = 'hot-admin-key-0123456789abcdef';
const ALICE = 'hot-alice-key-0123456789abcdef';
const MAX_BODY = 4096;
const CREATED = '2026-01-02T03:04:05.000Z';

interface Side {
  api: Api;
  lines: Array<Record<string, any>>;
}

async function side(expressOnly: boolean): Promise<Side> {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, any>) });
  const api = await startApi(
    { api_keys: [{ key: ADMIN, users: ['*'] }, { key: ALICE, users: ['alice'] }], max_body_bytes: MAX_BODY, log_level: 'info' },
    { logger, expressOnly },
  );
  return { api, lines };
}

/** what may differ between two equal answers: request ids, timings, float noise of recency scores */
function normalize(v: unknown, key = ''): unknown {
  if (typeof v === 'string') return v.replace(/request [0-9a-f-]{36}/g, 'request <id>');
  if (typeof v === 'number') return key === 'ms' ? 0 : Number.isInteger(v) ? v : Number(v.toFixed(6));
  if (Array.isArray(v)) return v.map((x) => normalize(x, key));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x, k)]));
  return v;
}

const CLIENT_HEADERS = ['content-type', 'content-length', 'retry-after', 'www-authenticate', 'allow'];

function answerOf(r: Reply) {
  return {
    status: r.status,
    body: r.json === undefined ? r.text : normalize(r.json),
    headers: Object.fromEntries(CLIENT_HEADERS.map((h) => [h, h === 'content-length' && r.json !== undefined ? null : r.headers.get(h)])),
    requestId: /^[0-9a-f-]{36}$/.test(r.headers.get('x-request-id') ?? ''),
  };
}

/** the http component's lines since `from`, without what differs by run (time, ids, response time) */
function httpLines(s: Side, from: number) {
  return s.lines.slice(from).filter((l) => l.component === 'http').map((l) => {
    const { time, pid, hostname, responseTime, ...rest } = l;
    assert.equal(typeof responseTime === 'number' || rest.msg === 'unexpected error', true, 'a request line carries its response time');
    return normalize({ ...rest, req: rest.req ? { ...rest.req, id: typeof rest.req.id } : undefined, err: rest.err ? { message: rest.err.message, type: rest.err.type } : undefined });
  });
}

describe('hot routes answer as the Express routes do', () => {
  let hot: Side;
  let plain: Side;
  before(async () => {
    [hot, plain] = await Promise.all([side(false), side(true)]);
  });
  after(async () => {
    await Promise.all([hot.api.close(), plain.api.close()]);
  });

  /** requests the hot side handed to Express */
  let toExpress = 0;
  before(() => {
    // every request Express answers goes through app.handle
    const app = hot.api.app as unknown as { handle: (...args: unknown[]) => unknown };
    const handle = app.handle.bind(app);
    app.handle = (...args: unknown[]) => {
      toExpress++;
      return handle(...args);
    };
  });

  /**
   * The same request to both; their answers and log lines compared; the hot side's answer returned.
   * `via`: whether the hot routes answer it themselves or hand it to Express.
   */
  async function same(method: string, path: string, o: RequestOptions, expectStatus: number, via: 'hot' | 'express' = 'hot'): Promise<Reply> {
    const from = [hot.lines.length, plain.lines.length] as const;
    const handed = toExpress;
    const a = await hot.api.request(method, path, o);
    assert.equal(toExpress - handed, via === 'hot' ? 0 : 1, `${method} ${path} answered by ${via === 'hot' ? 'the hot route' : 'Express'}`);
    const b = await plain.api.request(method, path, o);
    assert.deepEqual(answerOf(a), answerOf(b), `${method} ${path}`);
    assert.equal(a.status, expectStatus, `${method} ${path}: ${a.text}`);
    // the line is written when the response ends, which the client may see first
    await new Promise((r) => setTimeout(r, 20));
    const la = httpLines(hot, from[0]);
    assert.deepEqual(la, httpLines(plain, from[1]), `log lines of ${method} ${path}`);
    assert.ok(la.length >= 1, 'a request log line');
    return a;
  }

  const key = (k: string, body?: unknown, headers?: Record<string, string>): RequestOptions => ({ key: k, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
  const raw = (k: string, body: string | Buffer, headers: Record<string, string>): RequestOptions => ({ key: k, raw: body, headers });

  test('valid writes: one turn, a batch, a duplicate; 202 with the same body', async () => {
    const one = await same('POST', '/sessions/s1/turns', key(ADMIN, turn('I moved to Lisbon last spring', { id: 't-1', user_id: 'alice', created_at: CREATED })), 202);
    assert.deepEqual(one.json, { ids: ['t-1'], accepted: 1, duplicates: 0 });
    await same('POST', '/sessions/s1/turns/', key(ALICE, { turns: [turn('my sister Clara visits on Friday', { id: 't-2', created_at: CREATED }), turn('I am allergic to peanuts', { id: 't-3', created_at: CREATED })] }), 202);
    const dup = await same('POST', '/sessions/s1/turns?x=1', key(ALICE, turn('I moved to Lisbon last spring', { id: 't-1', created_at: CREATED })), 202);
    assert.equal(dup.json.duplicates, 1);
    // charset spelled out, a BOM-less body with leading whitespace is Express's to read
    await same('POST', '/sessions/s1/turns', raw(ALICE, JSON.stringify(turn('charset given', { id: 't-4', created_at: CREATED })), { 'content-type': 'application/json; charset=UTF-8' }), 202);
    await same('POST', '/sessions/s1/turns', raw(ALICE, ' ' + JSON.stringify(turn('leading space', { id: 't-5', created_at: CREATED })), { 'content-type': 'application/json' }), 202, 'express');
    // compressed and chunked bodies go to Express, which reads them
    await same('POST', '/sessions/s1/turns', raw(ALICE, gzipSync(JSON.stringify(turn('gzip body', { id: 't-6', created_at: CREATED }))), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 202, 'express');
    const id = 'auto-' + 'x'.repeat(8);
    const gen = await same('POST', '/sessions/s2/turns', key(ALICE, turn('no id given, one is generated', { id, created_at: CREATED })), 202);
    assert.deepEqual(gen.json.ids, [id]);
    assert.equal(await hot.api.services.turnLog.counts().then((c) => c.total), await plain.api.services.turnLog.counts().then((c) => c.total));
  });

  test('valid retrieves: 200 with the same results, prompt blocks and tier reports', async () => {
    await Promise.all([hot.api.memory.idle(), plain.api.memory.idle()]);
    const r = await same('POST', '/memory/retrieve', key(ALICE, { query: 'where did I move?', session_id: 's1' }), 200);
    assert.ok(r.json.results.length > 0, 'finds the turns written above');
    await same('POST', '/memory/retrieve', key(ADMIN, { query: 'allergic', user_id: 'alice', top_k: 2 }), 200);
    await same('POST', '/memory/retrieve', key(ADMIN, { query: 'allergic' }), 200); // the default user: nothing
  });

  test('400: validation failures name the field', async () => {
    const cases: Array<[string, unknown]> = [
      ['/sessions/s1/turns', { content: 'no role' }],
      ['/sessions/s1/turns', { role: 'user', content: '   ' }],
      ['/sessions/s1/turns', { role: 'user', content: 'x', surprise: 1 }],
      ['/sessions/s1/turns', { role: 'user', content: 'x', session_id: 'other' }],
      ['/sessions/s1/turns', { turns: [] }],
      ['/sessions/s1/turns', { turns: [{ role: 'user', content: 'ok' }, { role: 'robot', content: 'x' }] }],
      ['/sessions/s1/turns', { role: 'user', content: 'x', created_at: '1960-01-01T00:00:00Z' }],
      [`/sessions/${'s'.repeat(200)}/turns`, { role: 'user', content: 'x' }],
      ['/memory/retrieve', { session_id: 's1' }],
      ['/memory/retrieve', { query: 'x', top_k: 'eight' }],
      ['/memory/retrieve', { query: 'x', unknown_field: true }],
    ];
    for (const [path, body] of cases) {
      const r = await same('POST', path, key(ALICE, body), 400);
      assert.equal(r.json.error.code, 'bad_request');
      assert.ok(r.json.error.details.length > 0, `details name the field: ${r.text}`);
    }
  });

  test('400: bodies the parser refuses (malformed, not UTF-8, too deep, BOM, not an object, no body)', async () => {
    const json = { 'content-type': 'application/json' };
    const bodies: Array<string | Buffer> = [
      '{"role": "user", "content": ',
      Buffer.from([0x7b, 0x22, 0x72, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
      '{"a":' + '['.repeat(100) + ']'.repeat(100) + '}',
      '"a string"',
      '[{"role":"user","content":"x"}]',
      'null',
    ];
    for (const body of bodies) for (const path of ['/sessions/s1/turns', '/memory/retrieve']) await same('POST', path, raw(ALICE, body, json), 400, 'express');
    // a BOM: Express strips it and reads the object
    await same('POST', '/sessions/s1/turns', raw(ALICE, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(turn('bom', { id: 't-bom', created_at: CREATED })))]), json), 202, 'express');
    await same('POST', '/sessions/s1/turns', { key: ALICE }, 400, 'express');
    await same('POST', '/memory/retrieve', { key: ALICE }, 400, 'express');
  });

  test('401 without a key or with a wrong one; 403 for a user the key may not touch', async () => {
    for (const path of ['/sessions/s1/turns', '/memory/retrieve']) {
      const body = path === '/memory/retrieve' ? { query: 'x' } : turn('x');
      const none = await same('POST', path, { body }, 401, 'express');
      assert.equal(none.json.error.code, 'unauthorized');
      await same('POST', path, key('not-a-key-0123456789abcdefgh', body), 401, 'express');
      const other = path === '/memory/retrieve' ? { query: 'x', user_id: 'bob' } : turn('x', { user_id: 'bob' });
      const r = await same('POST', path, key(ALICE, other), 403);
      assert.equal(r.json.error.code, 'forbidden');
    }
    // a batch naming another user anywhere is refused whole
    await same('POST', '/sessions/s1/turns', key(ALICE, { turns: [turn('mine'), turn('theirs', { user_id: 'bob' })] }), 403);
  });

  test('404 and 405 on paths and methods beside the hot routes', async () => {
    await same('POST', '/sessions/a/b/turns', key(ALICE, turn('x')), 404, 'express');
    await same('POST', '/memory/retrieve/more', key(ALICE, { query: 'x' }), 404, 'express');
    await same('GET', '/memory/retrieve', { key: ALICE }, 405, 'express');
    await same('PUT', '/sessions/s1/turns', key(ALICE, turn('x')), 405, 'express');
    // another spelling of the path is Express's (it matches paths in any case)
    await same('POST', '/Sessions/s1/TURNS', key(ALICE, turn('case', { id: 't-case', created_at: CREATED })), 202, 'express');
    await same('POST', '/sessions/s%201/turns', key(ALICE, turn('encoded', { id: 't-enc', created_at: CREATED })), 202, 'express');
  });

  test('409 content_conflict names the id, and nothing of the write is stored', async () => {
    const r = await same('POST', '/sessions/s1/turns', key(ALICE, { turns: [turn('fresh', { id: 't-new', created_at: CREATED }), turn('I moved to Porto', { id: 't-1', created_at: CREATED })] }), 409);
    assert.equal(r.json.error.code, 'content_conflict');
    assert.match(r.text, /t-1/);
    assert.deepEqual(await hot.api.services.turnLog.getMany([{ user_id: 'alice', id: 't-new' }]), [null]);
  });

  test('413 over max_body_bytes; 415 for other types, charsets and encodings', async () => {
    const big = JSON.stringify(turn('y'.repeat(MAX_BODY)));
    assert.equal((await same('POST', '/sessions/s1/turns', raw(ALICE, big, { 'content-type': 'application/json' }), 413, 'express')).json.error.code, 'payload_too_large');
    const body = JSON.stringify(turn('x'));
    const types: Array<Record<string, string>> = [{ 'content-type': 'text/plain' }, { 'content-type': 'application/json; charset=latin1' }, { 'content-type': 'application/json', 'content-encoding': 'br2' }];
    for (const headers of types) {
      const r = await same('POST', '/sessions/s1/turns', raw(ALICE, body, headers), 415, 'express');
      assert.equal(r.json.error.code, 'unsupported_media_type');
      await same('POST', '/memory/retrieve', raw(ALICE, JSON.stringify({ query: 'x' }), headers), 415, 'express');
    }
  });

  test('503 backend_unavailable (with Retry-After when busy) and 500 logged whole, answered without detail', async () => {
    const failWith = (err: () => Error) => {
      const restore: Array<() => void> = [];
      for (const s of [hot, plain]) {
        const wp = s.api.services.writePath as { addTurns: (...a: unknown[]) => Promise<unknown> };
        const m = s.api.memory as { retrieve: (...a: unknown[]) => Promise<unknown> };
        const [addTurns, retrieve] = [wp.addTurns, m.retrieve];
        wp.addTurns = async () => Promise.reject(err());
        m.retrieve = async () => Promise.reject(err());
        restore.push(() => {
          wp.addTurns = addTurns;
          m.retrieve = retrieve;
        });
      }
      return () => restore.forEach((f) => f());
    };
    let restore = failWith(() => new BackendUnavailableError('sqlite', 'the turn log does not answer'));
    try {
      assert.equal((await same('POST', '/sessions/s1/turns', key(ALICE, turn('x')), 503)).json.error.code, 'backend_unavailable');
      await same('POST', '/memory/retrieve', key(ALICE, { query: 'x' }), 503);
    } finally {
      restore();
    }
    restore = failWith(() => new BackendBusyError('sqlite'));
    try {
      const r = await same('POST', '/sessions/s1/turns', key(ALICE, turn('x')), 503);
      assert.equal(r.headers.get('retry-after'), '1');
    } finally {
      restore();
    }
    restore = failWith(() => new Error('a bug with a secret in it'));
    try {
      const from = hot.lines.length;
      const r = await same('POST', '/sessions/s1/turns', key(ALICE, turn('x')), 500);
      assert.doesNotMatch(r.text, /secret/);
      assert.match(r.text, new RegExp(`request ${r.headers.get('x-request-id')}`));
      await new Promise((res) => setTimeout(res, 20));
      const logged = hot.lines.slice(from);
      assert.ok(logged.some((l) => l.msg === 'unexpected error' && /secret/.test(l.err?.message) && l.req?.id === r.headers.get('x-request-id')), 'the error is logged whole');
      assert.ok(logged.some((l) => l.msg === 'request errored' && l.level === 50 && l.error_code === 'internal'));
    } finally {
      restore();
    }
  });

  test('request log lines: route template and status, never the path or the user', async () => {
    const from = hot.lines.length;
    const r = await same('POST', '/sessions/secret-session/turns', key(ALICE, turn('log me not', { id: 't-log', created_at: CREATED })), 202);
    await same('POST', '/memory/retrieve', key(ALICE, { query: 'x', user_id: 'mallory-x' }), 403);
    await new Promise((res) => setTimeout(res, 20));
    const lines = hot.lines.slice(from).filter((l) => l.component === 'http');
    assert.deepEqual(
      lines.map((l) => [l.msg, l.req.method, l.req.route, l.res.statusCode, l.error_code]),
      [
        ['request completed', 'POST', '/sessions/:session_id/turns', 202, undefined],
        ['request completed', 'POST', '/memory/retrieve', 403, 'forbidden'],
      ],
    );
    assert.equal(lines[0]!.req.id, r.headers.get('x-request-id'), JSON.stringify(lines) + r.headers.get('x-request-id'));
    const text = JSON.stringify(lines);
    for (const secret of ['secret-session', 'alice', 'log me not', 'mallory-x', ALICE]) assert.ok(!text.includes(secret), secret);
  });

  test('metrics: every request timed under its route template and status, as Express counts them', async () => {
    const count = async (s: Side) => {
      const m = (await s.api.request('GET', '/metrics', { key: ADMIN })).text;
      return m
        .split('\n')
        .filter((l) => l.startsWith('neuralcleave_http_request_duration_seconds_count') && /route="\/(sessions|memory\/retrieve)/.test(l))
        .sort();
    };
    const [a, b] = [await count(hot), await count(plain)];
    assert.deepEqual(a, b);
    assert.ok(a.some((l) => l.includes('route="/sessions/:session_id/turns",status="202"')), a.join('\n'));
    assert.ok(a.some((l) => l.includes('route="/memory/retrieve",status="200"')));
  });
});
