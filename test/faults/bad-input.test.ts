import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, type RedisHandle } from '../helpers/redis.js';
import { tmpDir } from '../helpers/tmp.js';
import { Fleet, faultEnv, pendingIn, rawRequest, readDb, until, type Reply } from './helpers.js';

/** Every table of the file, row by row (a digest, not only counts), and every Redis key with its value. */
async function snapshot(dbPath: string, redisUrl: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  readDb(dbPath, (db) => {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'entries_fts_%' ORDER BY name").all() as Array<{ name: string }>;
    for (const { name } of tables) {
      const rows = db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
      out[`sqlite:${name}`] = `${rows.length} rows ${JSON.stringify(rows, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)).length} chars ${hash(JSON.stringify(rows, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)))}`;
    }
  });
  const redis = new Redis(redisUrl);
  try {
    // BullMQ's own bookkeeping (the worker's heartbeat keys and its event stream) changes by itself
    const keys = (await redis.keys('*')).filter((k) => !/:(stalled-check|events|meta|marker|id)$/.test(k)).sort();
    for (const k of keys) {
      const type = await redis.type(k);
      const value =
        type === 'list' ? await redis.lrange(k, 0, -1) : type === 'zset' ? await redis.zrange(k, 0, -1) : type === 'hash' ? await redis.hgetall(k) : type === 'string' ? await redis.get(k) : type === 'set' ? (await redis.smembers(k)).sort() : type;
      out[`redis:${k}`] = hash(JSON.stringify(value));
    }
  } finally {
    redis.disconnect();
  }
  return out;
}

function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  /** the answer's message (and details) must name the problem */
  names: RegExp;
}

const turn = (extra: Record<string, unknown> = {}) => JSON.stringify({ role: 'user', content: 'a perfectly normal turn', ...extra });

const CASES: Case[] = [
  // malformed JSON and wrong shapes
  { name: 'truncated JSON', method: 'POST', path: '/sessions/s1/turns', body: '{"role":"user","content":"hi"', status: 400, names: /malformed JSON/ },
  { name: 'trailing comma', method: 'POST', path: '/sessions/s1/turns', body: '{"role":"user","content":"hi",}', status: 400, names: /malformed JSON/ },
  { name: 'single quotes', method: 'POST', path: '/sessions/s1/turns', body: "{'role':'user','content':'hi'}", status: 400, names: /malformed JSON/ },
  { name: 'an array for a turn', method: 'POST', path: '/sessions/s1/turns', body: '[{"role":"user","content":"hi"}]', status: 400, names: /one turn object/ },
  { name: 'a bare string', method: 'POST', path: '/sessions/s1/turns', body: '"hello"', status: 400, names: /malformed JSON|one turn object/ },
  { name: 'content is a number', method: 'POST', path: '/sessions/s1/turns', body: JSON.stringify({ role: 'user', content: 42 }), status: 400, names: /content/ },
  { name: 'role is unknown', method: 'POST', path: '/sessions/s1/turns', body: turn({ role: 'wizard' }), status: 400, names: /role/ },
  { name: 'importance is a string', method: 'POST', path: '/sessions/s1/turns', body: turn({ importance: 'high' }), status: 400, names: /importance/ },
  { name: 'importance above 1', method: 'POST', path: '/sessions/s1/turns', body: turn({ importance: 7 }), status: 400, names: /importance/ },
  { name: 'pinned is a string', method: 'POST', path: '/sessions/s1/turns', body: turn({ pinned: 'yes' }), status: 400, names: /pinned/ },
  { name: 'metadata is an array', method: 'POST', path: '/sessions/s1/turns', body: turn({ metadata: [1, 2] }), status: 400, names: /metadata/ },
  { name: 'an unknown field', method: 'POST', path: '/sessions/s1/turns', body: turn({ colour: 'red' }), status: 400, names: /colour/ },
  { name: 'created_at is not a date', method: 'POST', path: '/sessions/s1/turns', body: turn({ created_at: 'yesterday' }), status: 400, names: /created_at/ },
  { name: 'turns is not an array', method: 'POST', path: '/sessions/s1/turns', body: JSON.stringify({ turns: { role: 'user' } }), status: 400, names: /turns/ },
  { name: 'one bad turn in a batch (all or nothing)', method: 'POST', path: '/sessions/s1/turns', body: JSON.stringify({ turns: [JSON.parse(turn()), JSON.parse(turn({ role: 'nobody' }))] }), status: 400, names: /turns\.1\.role/ },
  { name: '1,001 turns in one batch', method: 'POST', path: '/sessions/s1/turns', body: JSON.stringify({ turns: Array.from({ length: 1001 }, (_, i) => ({ role: 'user', content: `t${i}` })) }), status: 400, names: /turns.*1000|1000.*turns/ },
  { name: 'JSON nested 10,000 deep', method: 'POST', path: '/sessions/s1/turns', body: `{"role":"user","content":"x","metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`, status: 400, names: /nested deeper/ },
  { name: 'a text/plain body', method: 'POST', path: '/sessions/s1/turns', body: 'role=user&content=hi', headers: { 'content-type': 'text/plain' }, status: 415, names: /JSON/ },
  { name: 'no body at all', method: 'POST', path: '/sessions/s1/turns', status: 400, names: /body is required/ },
  { name: 'retrieve without a query', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ user_id: 'u1' }), status: 400, names: /query/ },
  { name: 'PATCH with nothing to change', method: 'PATCH', path: '/memory/some-id', body: '{}', status: 400, names: /content, importance, pinned/ },
  { name: 'prune with no criterion', method: 'POST', path: '/memory/prune', body: '{}', status: 400, names: /criterion/ },

  // sizes
  { name: 'a 2 MiB body', method: 'POST', path: '/sessions/s1/turns', body: turn({ content: 'x'.repeat(2 * 1024 * 1024) }), status: 413, names: /too large.*1048576 bytes/ },
  { name: 'content one character over max_turn_chars', method: 'POST', path: '/sessions/s1/turns', body: turn({ content: 'y'.repeat(32_001) }), status: 400, names: /content.*32000/ },
  { name: 'metadata over 8 KiB', method: 'POST', path: '/sessions/s1/turns', body: turn({ metadata: { blob: 'm'.repeat(9000) } }), status: 400, names: /metadata.*8192 bytes/ },
  { name: 'a 5,000-character retrieve query', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ query: 'q'.repeat(5000) }), status: 400, names: /query.*4000/ },
  { name: 'a 5,000-character search', method: 'GET', path: `/memory/search?q=${'q'.repeat(5000)}`, status: 400, names: /q.*4000/ },

  // control characters and broken Unicode
  { name: 'NUL in content (JSON escape)', method: 'POST', path: '/sessions/s1/turns', body: turn({ content: 'before\u0000after' }), status: 400, names: /content.*control character/ },
  { name: 'ESC in content', method: 'POST', path: '/sessions/s1/turns', body: turn({ content: 'colour \u001b[31mred' }), status: 400, names: /content.*control character/ },
  { name: 'a raw control byte inside a JSON string', method: 'POST', path: '/sessions/s1/turns', body: Buffer.from('{"role":"user","content":"a\u0001b"}', 'latin1'), status: 400, names: /malformed JSON/ },
  { name: 'a lone high surrogate "\\ud800" in content', method: 'POST', path: '/sessions/s1/turns', body: '{"role":"user","content":"broken \\ud800 text"}', status: 400, names: /content.*surrogate/ },
  { name: 'a lone low surrogate "\\udfff" in name', method: 'POST', path: '/sessions/s1/turns', body: '{"role":"user","content":"hi","name":"\\udfff"}', status: 400, names: /name.*surrogate/ },
  { name: 'a lone surrogate in user_id', method: 'POST', path: '/sessions/s1/turns', body: '{"role":"user","content":"hi","user_id":"\\ud800"}', status: 400, names: /user_id.*surrogate/ },
  { name: 'a control character in user_id', method: 'POST', path: '/sessions/s1/turns', body: turn({ user_id: 'ali\u0007ce' }), status: 400, names: /user_id.*control character/ },
  { name: 'a control character in the session path', method: 'POST', path: '/sessions/s%00ssion/turns', body: turn(), status: 400, names: /session_id.*control character/ },
  { name: 'a surrogate encoded as raw UTF-8 bytes (ED A0 80: invalid UTF-8)', method: 'POST', path: '/sessions/s1/turns', body: Buffer.concat([Buffer.from('{"role":"user","content":"bad '), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), status: 400, names: /UTF-8/ },
  { name: 'a truncated UTF-8 sequence', method: 'POST', path: '/sessions/s1/turns', body: Buffer.concat([Buffer.from('{"role":"user","content":"cut '), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]), status: 400, names: /UTF-8/ },
  { name: 'a lone surrogate in a retrieve query', method: 'POST', path: '/memory/retrieve', body: '{"query":"find \\ud83d this"}', status: 400, names: /query.*surrogate/ },
  { name: 'invalid percent-encoding in a path parameter', method: 'DELETE', path: '/memory/%E0%A4%A', status: 400, names: /decode/ },

  // ids: path traversal
  { name: '"../" in a turn id', method: 'POST', path: '/sessions/s1/turns', body: turn({ id: '../../etc/passwd' }), status: 400, names: /id.*letters, digits/ },
  { name: '%2e%2e%2f in a memory id (GET)', method: 'GET', path: '/memory/%2e%2e%2f%2e%2e%2fetc%2fpasswd', status: 400, names: /id.*letters, digits/ },
  { name: '%2e%2e%2f in a memory id (DELETE)', method: 'DELETE', path: '/memory/..%2F..%2Fentries', status: 400, names: /id.*letters, digits/ },
  { name: '%2e%2e%2f in a memory id (PATCH)', method: 'PATCH', path: '/memory/%2e%2e%2fx', body: JSON.stringify({ importance: 0.5 }), status: 400, names: /id.*letters, digits/ },
  { name: 'raw ../ segments in the path', method: 'DELETE', path: '/memory/../../etc/passwd', status: 404, names: /no route/ },
  { name: '".." as a memory id', method: 'DELETE', path: '/memory/..', status: 404, names: /not found/ },

  // enormous or malformed limits
  { name: 'limit=1000001', method: 'GET', path: '/memory/recent?limit=1000001', status: 400, names: /limit/ },
  { name: 'limit of 30 digits', method: 'GET', path: `/memory/search?q=x&limit=${'9'.repeat(30)}`, status: 400, names: /limit/ },
  { name: 'limit=1e3', method: 'GET', path: '/memory/recent?limit=1e3', status: 400, names: /limit.*whole number/ },
  { name: 'limit=-5', method: 'GET', path: '/memory/recent?limit=-5', status: 400, names: /limit/ },
  { name: 'limit=0', method: 'GET', path: '/memory/recent?limit=0', status: 400, names: /limit/ },
  { name: 'two q parameters', method: 'GET', path: '/memory/search?q=a&q=b', status: 400, names: /\bq\b/ },
  { name: 'top_k=1000000000', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ query: 'parcel', top_k: 1_000_000_000 }), status: 400, names: /top_k.*100/ },
  { name: 'top_k=1e400 (Infinity)', method: 'POST', path: '/memory/retrieve', body: '{"query":"parcel","top_k":1e400}', status: 400, names: /top_k/ },
  { name: 'top_k=2.5', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ query: 'parcel', top_k: 2.5 }), status: 400, names: /top_k/ },
  { name: 'top_k as a string', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ query: 'parcel', top_k: '8' }), status: 400, names: /top_k/ },
  { name: 'top_k=0', method: 'POST', path: '/memory/retrieve', body: JSON.stringify({ query: 'parcel', top_k: 0 }), status: 400, names: /top_k/ },
];

/** Search strings with SQL and FTS5 syntax: valid queries, matched literally — never an error. */
const SYNTAX = ['"', '""quoted""', '*', 'parc*', 'NEAR', 'NEAR(parcel dock)', 'parcel OR dock', 'parcel AND', '-dock', 'NOT parcel', "'; DROP TABLE entries; --", "' OR '1'='1", 'content:parcel', '^parcel', '(', ')', '{dock}', '%', '_', '\\'];

/**
 * Bad input against the real server (`serve`, with Redis, workers in-process): each request gets a
 * 4xx whose message names the problem, the server stays up, and the store — every SQLite table and
 * every Redis key — is exactly as it was. Search strings full of SQL and FTS5 syntax are not bad
 * input: they are answered (200) and matched literally.
 */
describe('faults: bad input over HTTP against the real server', () => {
  const dir = tmpDir('nc-fault-input-');
  const fleet = new Fleet();
  const dbPath = join(dir, 'input.db');
  let redis: RedisHandle;
  let base = '';
  before(async () => {
    redis = await startRedis();
    const env = faultEnv({ sqlitePath: dbPath, redisUrl: redis.url, prefix: 'in', extra: { NEURALCLEAVE_SERVE_RUNS_WORKERS: 'true' } });
    base = (await fleet.serve(env)).base;
    // something to protect: turns in every tier, one of them full of query syntax
    const seed = [
      { role: 'user', content: 'the courier brings parcel 17 to dock 3', importance: 0.9 },
      { role: 'assistant', content: `literal syntax: "quoted" parc* NEAR(a b) x OR y -dock '; DROP TABLE entries; -- 100% a_b c\\d`, importance: 0.9 },
      { role: 'user', content: 'a low-importance aside', importance: 0.1 },
    ];
    const r = await rawRequest(base, 'POST', '/sessions/seed/turns', JSON.stringify({ turns: seed.map((t) => ({ ...t, user_id: 'u1' })) }));
    assert.equal(r.status, 202, r.text);
    await until('the seed processed', () => pendingIn(dbPath) === 0, 30_000, 50);
  });
  after(async () => {
    fleet.killAll();
    await redis?.stop(true);
  });

  it('answers each with a 4xx naming the problem, stays up, and changes nothing', { timeout: 120_000 }, async () => {
    const before = await snapshot(dbPath, redis.url);
    const wrong: string[] = [];
    for (const c of CASES) {
      let r: Reply;
      try {
        r = await rawRequest(base, c.method, c.path, c.body, c.headers);
      } catch (err) {
        wrong.push(`${c.name}: no answer (${(err as Error).message})`);
        continue;
      }
      const e = r.json?.error as { code?: string; message?: string; details?: unknown } | undefined;
      const said = `${e?.message ?? ''} ${JSON.stringify(e?.details ?? [])}`;
      if (r.status !== c.status || !e?.code || !c.names.test(said)) wrong.push(`${c.name}: ${r.status} ${r.text.slice(0, 300)}`);
    }
    assert.deepEqual(wrong, [], 'every bad request answered with the right 4xx and a message naming the problem');

    const health = await rawRequest(base, 'GET', '/health');
    assert.equal(health.status, 200, 'the server is still up');
    assert.deepEqual(await snapshot(dbPath, redis.url), before, 'the store is unchanged');
  });

  it('matches SQL and FTS5 syntax in search strings literally, with no error', { timeout: 60_000 }, async () => {
    const before = await snapshot(dbPath, redis.url);
    const wrong: string[] = [];
    for (const q of SYNTAX) {
      const search = await rawRequest(base, 'GET', `/memory/search?user_id=u1&q=${encodeURIComponent(q)}`);
      const entries = (search.json?.entries ?? []) as Array<{ content: string }>;
      if (search.status !== 200) wrong.push(`search ${q}: ${search.status} ${search.text.slice(0, 200)}`);
      // a substring search: what it returns holds the string, and the seeded entry holding it is found
      else if (entries.some((e) => !e.content.includes(q))) wrong.push(`search ${q}: returned an entry without it`);
      else if (SEEDED.includes(q) && entries.length === 0) wrong.push(`search ${q}: did not find the entry holding it`);

      const retrieve = await rawRequest(base, 'POST', '/memory/retrieve', JSON.stringify({ query: q, user_id: 'u1' }));
      const tiers = retrieve.json?.tiers as Record<string, { status: string; error?: string }> | undefined;
      if (retrieve.status !== 200) wrong.push(`retrieve ${q}: ${retrieve.status} ${retrieve.text.slice(0, 200)}`);
      else if (tiers?.long_term?.status !== 'ok') wrong.push(`retrieve ${q}: long-term tier ${JSON.stringify(tiers?.long_term)}`);
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(await snapshot(dbPath, redis.url), before, 'the store is unchanged');
  });
});

/** strings of SYNTAX that the seeded entry holds literally */
const SEEDED = ['"', '*', 'parc*', 'NEAR', 'NEAR(a b)', '-dock', "'; DROP TABLE entries; --", '%', '_', '\\'];
