import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startServer } from '../../../src/api/server.js';
import { ConfigError } from '../../../src/errors.js';
import { testMemory } from '../../helpers/services.js';
import { startApi, storeDigest, turn, type Api } from './harness.js';

const ALICE = 'alice-key-aaaaaaaaaaaaaaaa';
const BOB = 'bob-key-bbbbbbbbbbbbbbbbbbbb';
const TEAM = 'team-key-cccccccccccccccccc';
const ADMIN = 'admin-key-dddddddddddddddd';
const API_KEYS = [
  { key: ALICE, users: ['alice'] },
  { key: BOB, users: ['bob'] },
  { key: TEAM, users: ['alice', 'carol'] },
  { key: ADMIN, users: ['*'] },
];
const USERS = ['alice', 'bob', 'carol', 'default'];

describe('API keys and user isolation', () => {
  let api: Api;
  const logLines: string[] = [];
  let bobIds: string[] = [];
  let aliceIds: string[] = [];

  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    });
    api = await startApi({ api_keys: API_KEYS }, { logger: pino({ level: 'info' }, sink) });
    const seed = async (key: string, user: string, contents: string[]) => {
      const r = await api.request('POST', `/sessions/${user}-s/turns`, { key, body: { turns: contents.map((c) => turn(c, { user_id: user, created_at: new Date(Date.now() - 40 * 86_400_000).toISOString(), importance: 0.4 })) } });
      assert.equal(r.status, 202, r.text);
      return r.json.ids as string[];
    };
    aliceIds = await seed(ALICE, 'alice', ['alice likes green tea', 'alice secret: the shared word']);
    bobIds = await seed(ADMIN, 'bob', ['bob likes black coffee', 'bob secret: the shared word']);
    await api.memory.idle();
  });
  after(() => api.close());

  const authenticated: Array<[string, string, unknown?]> = [
    ['POST', '/sessions/s/turns', turn('x')],
    ['GET', '/memory/search?q=word'],
    ['GET', '/memory/recent'],
    ['POST', '/memory/retrieve', { query: 'word' }],
    ['POST', '/memory/prune', { older_than_days: 1 }],
    ['GET', '/memory/some-id'],
    ['PATCH', '/memory/some-id', { importance: 0.1 }],
    ['DELETE', '/memory/some-id'],
    ['GET', '/metrics'],
    ['GET', '/openapi.json'],
    ['GET', '/no-such-route'],
  ];

  test('every route but GET /health answers 401 without a valid key, and writes nothing', async () => {
    const before = await storeDigest(api, USERS);
    for (const [method, path, body] of authenticated) {
      for (const key of [undefined, 'wrong-key-000000000000000', ALICE.slice(0, -1), `${ALICE} `.repeat(2)]) {
        const r = await api.request(method, path, { ...(key !== undefined ? { key } : {}), ...(body !== undefined ? { body } : {}) });
        assert.equal(r.status, 401, `${method} ${path} with ${key}`);
        assert.equal(r.json.error.code, 'unauthorized');
        assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    }
    assert.equal(await storeDigest(api, USERS), before);
  });

  test('GET /health needs no key and then shows no paths or details; a key sees the full report', async () => {
    const open = await api.request('GET', '/health');
    assert.equal(open.status, 200);
    assert.ok(open.json.backends.long_term && open.json.queues && open.json.embedder);
    assert.equal(open.json.sqlite_path, undefined);
    assert.ok(!open.text.includes(api.services.config.sqlite_path));
    assert.ok(Object.values(open.json.backends).every((b) => !('detail' in (b as object))));
    const full = await api.request('GET', '/health', { key: BOB });
    assert.equal(full.json.sqlite_path, api.services.config.sqlite_path);
    assert.ok(full.json.turn_log.total >= 4);
  });

  test('writes: a key writes for its own user only; with no user_id it writes as its only user', async () => {
    const before = await storeDigest(api, USERS);
    for (const body of [turn('x', { user_id: 'bob' }), { turns: [turn('mine', { user_id: 'alice' }), turn('theirs', { user_id: 'bob' })] }, turn('x', { user_id: 'default' })]) {
      const r = await api.request('POST', '/sessions/s/turns', { key: ALICE, body });
      assert.equal(r.status, 403, JSON.stringify(body));
      assert.equal(r.json.error.code, 'forbidden');
    }
    assert.equal(await storeDigest(api, USERS), before);
    const ok = await api.request('POST', '/sessions/alice-s/turns', { key: ALICE, body: turn('alice wrote this without a user_id') });
    assert.equal(ok.status, 202);
    assert.equal((await api.services.turnLog.get('alice', ok.json.ids[0]))?.user_id, 'alice');
    // a key for several users must name one (the default user is not among them)
    assert.equal((await api.request('POST', '/sessions/s/turns', { key: TEAM, body: turn('whose?') })).status, 403);
    assert.equal((await api.request('POST', '/sessions/s/turns', { key: TEAM, body: turn('carol speaks', { user_id: 'carol' }) })).status, 202);
  });

  test("reads: search, recent and retrieve refuse another user's memories whatever user_id is sent", async () => {
    for (const [method, path, body] of [
      ['GET', '/memory/search?q=word&user_id=bob'],
      ['GET', '/memory/recent?user_id=bob'],
      ['GET', '/memory/recent?user_id=bob&session_id=bob-s'],
      ['POST', '/memory/retrieve', { query: 'secret word', user_id: 'bob' }],
      ['POST', '/memory/retrieve', { query: 'secret word', user_id: 'bob', session_id: 'bob-s' }],
    ] as Array<[string, string, unknown?]>) {
      const r = await api.request(method, path, { key: ALICE, ...(body ? { body } : {}) });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.ok(!r.text.includes('coffee'));
    }
    // without user_id: the key's own user, never anyone else's
    const search = await api.request('GET', '/memory/search?q=secret', { key: ALICE });
    assert.deepEqual(search.json.entries.map((e: { user_id: string }) => e.user_id), ['alice']);
    const retrieve = await api.request('POST', '/memory/retrieve', { key: ALICE, body: { query: 'secret shared word coffee', session_id: 'bob-s' } });
    assert.equal(retrieve.status, 200);
    assert.ok(retrieve.json.results.length > 0);
    assert.ok(retrieve.json.results.every((x: { user_id: string }) => x.user_id === 'alice'));
    assert.ok(!retrieve.json.prompt_blocks.includes('coffee'));
    // the admin key reads anyone, a team key its users
    assert.equal((await api.request('GET', '/memory/search?q=coffee&user_id=bob', { key: ADMIN })).json.entries.length, 1);
    assert.equal((await api.request('GET', '/memory/recent?user_id=carol', { key: TEAM })).status, 200);
    assert.equal((await api.request('GET', '/memory/recent?user_id=bob', { key: TEAM })).status, 403);
  });

  test("by id: another user's entry is a 404 to GET, PATCH and DELETE (existence not revealed), unchanged", async () => {
    const before = await storeDigest(api, USERS);
    for (const id of bobIds) {
      const unknown = await api.request('GET', '/memory/never-existed', { key: ALICE });
      const get = await api.request('GET', `/memory/${id}`, { key: ALICE });
      const patch = await api.request('PATCH', `/memory/${id}`, { key: ALICE, body: { content: 'hijacked', pinned: true } });
      const del = await api.request('DELETE', `/memory/${id}`, { key: ALICE });
      for (const r of [get, patch, del]) {
        assert.equal(r.status, 404);
        // the same answer as for an id that never existed, but for the id itself
        assert.equal(r.json.error.message.replace(id, 'X'), unknown.json.error.message.replace('never-existed', 'X'));
      }
    }
    // naming bob is refused whatever the id: the answer is the same for his ids and for unknown ones
    for (const id of [...bobIds, 'never-existed']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const r = await api.request(method, `/memory/${id}?user_id=bob`, { key: ALICE, ...(method === 'PATCH' ? { body: { importance: 0.1 } } : {}) });
        assert.equal(r.status, 403, `${method} ${id}`);
        assert.equal(r.json.error.message, 'this API key may not touch the memories of user "bob"');
      }
    }
    assert.equal(await storeDigest(api, USERS), before);
    // the owner can
    const own = await api.request('PATCH', `/memory/${bobIds[0]}`, { key: BOB, body: { importance: 0.5 } });
    assert.equal(own.status, 200);
  });

  test("prune: another user's entries are out of reach; the key's own prune touches only its user", async () => {
    const bobBefore = await api.services.longTerm.count('bob');
    assert.ok(bobBefore >= 2);
    const forbidden = await api.request('POST', '/memory/prune', { key: ALICE, body: { user_id: 'bob', older_than_days: 1 } });
    assert.equal(forbidden.status, 403);
    const own = await api.request('POST', '/memory/prune', { key: ALICE, body: { older_than_days: 30 } });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.json.ids.sort(), [...aliceIds].sort());
    assert.equal(await api.services.longTerm.count('bob'), bobBefore);
  });

  test("/metrics (every tenant's request counts) answers an admin key only", async () => {
    for (const key of [ALICE, BOB, TEAM]) {
      const r = await api.request('GET', '/metrics', { key });
      assert.equal(r.status, 403);
      assert.equal(r.json.error.code, 'forbidden');
      assert.ok(!r.text.includes('neuralcleave_'));
    }
    const admin = await api.request('GET', '/metrics', { key: ADMIN });
    assert.equal(admin.status, 200);
    assert.match(admin.text, /neuralcleave_http_request/);
  });

  test('the key never reaches the log; requests are logged with their id', async () => {
    await api.request('GET', '/memory/recent', { key: ALICE, headers: { cookie: 'session=s3cr3t' } });
    await api.request('GET', '/memory/recent', { key: 'not-a-key-but-secret-too' });
    // what a URL carries: search words, session and memory ids, a key sent by mistake as a parameter
    await api.request('GET', '/memory/search?q=wordinthequery&session_id=sessioninthequery&api_key=keyinthequery', { key: ALICE });
    await api.request('GET', '/memory/idinthepath', { key: ALICE });
    await api.request('POST', '/sessions/sessioninthepath/turns', { key: ALICE, body: turn('words in the body') });
    await api.request('GET', '/no/such/pathwithwords', { key: ALICE });
    const log = logLines.join('');
    assert.match(log, /"route":"\/memory\/recent"/);
    assert.match(log, /"route":"\/memory\/:id"/);
    assert.match(log, /"route":"\/sessions\/:session_id\/turns"/);
    assert.match(log, /"id":"[0-9a-f-]{36}"/);
    assert.doesNotMatch(log, /"url"/);
    for (const secret of [...API_KEYS.map((k) => k.key), 'not-a-key-but-secret-too', 's3cr3t', 'wordinthequery', 'sessioninthequery', 'keyinthequery', 'idinthepath', 'sessioninthepath', 'words in the body', 'pathwithwords']) {
      assert.ok(!log.includes(secret), `${secret} leaked into the log`);
    }
  });
});

describe('binding', () => {
  test('startServer refuses a non-loopback host with no api_keys, before listening', async () => {
    const { memory, services } = await testMemory({ host: '0.0.0.0', port: 0 });
    try {
      await assert.rejects(startServer({ memory, services }), (err: unknown) => err instanceof ConfigError && /refusing to bind 0\.0\.0\.0/.test(err.message));
    } finally {
      await services.close();
    }
  });

  test('with no api_keys every route is open on loopback and user_id comes from the request', async () => {
    const api = await startApi();
    try {
      const r = await api.request('POST', '/sessions/s/turns', { body: turn('open door', { user_id: 'anyone' }) });
      assert.equal(r.status, 202);
      await api.memory.idle();
      const read = await api.request('GET', '/memory/search?q=open&user_id=anyone');
      assert.equal(read.json.entries.length, 1);
      assert.equal((await api.request('GET', '/memory/search?q=open')).json.entries.length, 0);
    } finally {
      await api.close();
    }
  });
});
