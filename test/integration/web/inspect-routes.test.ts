import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withoutRemoteLinks } from '../../../src/api/queue-board.js';
import { startApi, storeDigest, type Api } from '../api/harness.js';

const ALICE = 'alice-key-aaaaaaaaaaaaaaaaaaaa';
const TEAM = 'team-key-cccccccccccccccccccccc';
const ADMIN = 'admin-key-dddddddddddddddddddd';
const API_KEYS = [
  { key: ALICE, users: ['alice'] },
  { key: TEAM, users: ['alice', 'nobody-yet'] },
  { key: ADMIN, users: ['*'] },
];
const USERS = ['alice', 'bob', 'nobody-yet'];

const at = (minutes: number) => new Date(Date.UTC(2025, 0, 1, 12, minutes)).toISOString();

/** The /inspect routes the inspector page reads, through HTTP against a real service. */
describe('/inspect routes', () => {
  let api: Api;

  before(async () => {
    api = await startApi({ api_keys: API_KEYS, compaction_keep_turns: 1 });
    const turns = [
      { id: 'a1', user_id: 'alice', session_id: 'long', role: 'user', content: 'my dog is called Pixel', importance: 0.9, created_at: at(1) },
      { id: 'a2', user_id: 'alice', session_id: 'long', role: 'assistant', content: 'Pixel is a fine name for a dog', importance: 0.1, created_at: at(2) },
      { id: 'a3', user_id: 'alice', session_id: 'long', role: 'user', content: 'he likes the beach in the morning', importance: 0.8, created_at: at(3) },
      { id: 'a4', user_id: 'alice', session_id: 'short', role: 'user', content: 'what time is it', importance: 0.1, created_at: at(10) },
      { id: 'b1', user_id: 'bob', session_id: 'long', role: 'user', content: 'bob lives in Oslo', importance: 0.9, created_at: at(20) },
    ];
    assert.equal((await api.memory.addTurns(turns)).accepted, turns.length);
    await api.memory.idle();
    await api.memory.compact('alice', 'long');
    await api.memory.idle();
  });
  after(() => api.close());

  test('whoami says what a key may see', async () => {
    assert.deepEqual((await api.request('GET', '/inspect/whoami', { key: TEAM })).json, {
      admin: false,
      keys_enabled: true,
      users: ['alice', 'nobody-yet'],
      default_user: 'default',
      queue_backend: 'in-process',
      queue_board: null,
    });
    const alice = (await api.request('GET', '/inspect/whoami', { key: ALICE })).json;
    assert.equal(alice.default_user, 'alice');
    assert.equal((await api.request('GET', '/inspect/whoami')).status, 401);
  });

  test('users: every user for an admin, the bound ones (even empty) for a key', async () => {
    const all = (await api.request('GET', '/inspect/users', { key: ADMIN })).json;
    assert.equal(all.all, true);
    assert.deepEqual(all.users.map((u: { user_id: string }) => u.user_id), ['bob', 'alice'], 'most recently active first');
    const alice = all.users.find((u: { user_id: string }) => u.user_id === 'alice');
    assert.equal(alice.sessions, 2);
    assert.equal(alice.turns, 4);
    assert.ok(alice.entries >= 3, 'two important turns and a summary');

    const team = (await api.request('GET', '/inspect/users', { key: TEAM })).json;
    assert.equal(team.all, false);
    assert.deepEqual(team.users, [alice, { user_id: 'nobody-yet', sessions: 0, turns: 0, entries: 0, last_at: null }]);
    assert.deepEqual((await api.request('GET', '/inspect/users?limit=1', { key: ADMIN })).json.users.length, 1);
  });

  test("sessions and a session's entries: kind, tiers, importance and pinned state", async () => {
    const sessions = (await api.request('GET', '/inspect/sessions?user_id=alice', { key: ALICE })).json;
    assert.deepEqual(sessions.sessions.map((s: { session_id: string }) => s.session_id), ['short', 'long']);
    assert.ok(sessions.sessions.every((s: { live: boolean }) => s.live));

    const r = await api.request('GET', '/inspect/sessions/long/entries', { key: ALICE });
    assert.equal(r.status, 200);
    assert.equal(r.json.user_id, 'alice', "the key's only user by default");
    const byId = new Map<string, any>(r.json.entries.map((e: { id: string }) => [e.id, e]));
    const summary = r.json.entries.find((e: { kind: string }) => e.kind === 'summary');
    assert.ok(summary, 'the compaction summary is listed');
    assert.deepEqual(summary.tiers, { turn_log: false, short_term: true, semantic: true, long_term: true });
    assert.deepEqual(byId.get('a1').tiers, { turn_log: true, short_term: false, semantic: true, long_term: true }, 'compacted out of short-term');
    assert.equal(byId.get('a1').importance, 0.9);
    assert.deepEqual(byId.get('a2').tiers.long_term, false, 'below the importance threshold');
    assert.deepEqual(byId.get('a2').pending, { embed: false, persist: false });
    assert.equal(byId.get('a3').tiers.short_term, true, 'the newest turn stays in short-term');

    await api.request('PATCH', '/memory/a1', { key: ALICE, body: { pinned: true } });
    const again = (await api.request('GET', '/inspect/sessions/long/entries?user_id=alice&limit=2', { key: ALICE })).json.entries;
    assert.equal(again.length, 2, 'limit keeps the newest');
    const pinned = (await api.request('GET', '/inspect/sessions/long/entries', { key: ALICE })).json.entries.find((e: { id: string }) => e.id === 'a1');
    assert.equal(pinned.pinned, true);
  });

  test("another user's sessions are refused, and bad input is a 400 naming the field; nothing is written", async () => {
    const before = await storeDigest(api, USERS);
    for (const path of ['/inspect/sessions?user_id=bob', '/inspect/sessions/long/entries?user_id=bob']) {
      const r = await api.request('GET', path, { key: ALICE });
      assert.equal(r.status, 403, path);
      assert.equal(r.json.error.code, 'forbidden');
    }
    const cases: Array<[string, string]> = [
      ['/inspect/users?limit=0', 'limit'],
      ['/inspect/users?limit=abc', 'limit'],
      ['/inspect/sessions?user_id=alice&bogus=1', 'bogus'],
      ['/inspect/jobs/failed?queue=nope', 'queue'],
      [`/inspect/sessions/${'x'.repeat(129)}/entries?user_id=alice`, 'session_id'],
    ];
    for (const [path, field] of cases) {
      const r = await api.request('GET', path, { key: ADMIN });
      assert.equal(r.status, 400, path);
      assert.equal(r.json.error.code, 'bad_request');
      assert.ok(r.json.error.details.some((d: { path: string }) => d.path === field), `${path}: ${JSON.stringify(r.json.error.details)}`);
    }
    assert.equal((await api.request('POST', '/inspect/users', { key: ADMIN, body: {} })).status, 405);
    assert.equal(await storeDigest(api, USERS), before);
  });

  test('failed jobs answer for the in-process queue too (their filtering is tested with BullMQ in queue-board.test.ts)', async () => {
    const r = await api.request('GET', '/inspect/jobs/failed', { key: ALICE });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { queue_backend: 'in-process', jobs: [] });
  });

  test("the queue dashboard's page loses its link to a remote font, and keeps its own assets", () => {
    const page =
      '<head><link href="https://fonts.googleapis.com/css2?family=IBM+Plex+Sans" rel="stylesheet">' +
      '<link rel="icon" href="//cdn.example/x.png"><link href="static/css/main.css" rel="stylesheet"></head>';
    assert.equal(withoutRemoteLinks(page), '<head><link href="static/css/main.css" rel="stylesheet"></head>');
  });
});
