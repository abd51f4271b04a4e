import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApi, storeDigest, turn, type Api } from './harness.js';

const ADMIN = 'admin-key-naming-0000000000';
const TEAM = 'team-key-naming-11111111111';
const HANK = 'hank-key-naming-22222222222';

/** Which user a request acts for when the body of a batch or a prune names one, or names none. */
describe('naming the user: batch user_id and prune', () => {
  let api: Api;
  before(async () => {
    api = await startApi({ api_keys: [{ key: ADMIN, users: ['*'] }, { key: TEAM, users: ['hank', 'ivy'] }, { key: HANK, users: ['hank'] }] });
  });
  after(() => api.close());

  test("a batch's user_id is every turn's that names none, as MCP add_turns takes it", async () => {
    const r = await api.request('POST', '/sessions/m1/turns', { key: TEAM, body: { user_id: 'hank', turns: [turn('I keep bees on the roof'), turn('Two hives so far')] } });
    assert.equal(r.status, 202, r.text);
    await api.memory.idle();
    for (const id of r.json.ids as string[]) {
      assert.ok(await api.services.longTerm.get('hank', id), `${id} is hank's`);
      assert.equal(await api.services.longTerm.get('default', id), null, `${id} is not the default user's`);
    }
  });

  test("a turn naming another user than its batch is refused whole (400 naming it); the batch's user is checked against the key (403)", async () => {
    const before = await storeDigest(api, ['hank', 'ivy', 'default']);
    const mixed = await api.request('POST', '/sessions/m1/turns', { key: TEAM, body: { user_id: 'hank', turns: [turn('fine'), turn('sneaky', { user_id: 'ivy' })] } });
    assert.equal(mixed.status, 400, mixed.text);
    assert.deepEqual(mixed.json.error.details.map((d: { path: string }) => d.path), ['turns.1.user_id']);
    const other = await api.request('POST', '/sessions/m1/turns', { key: HANK, body: { user_id: 'ivy', turns: [turn('not mine to write')] } });
    assert.equal(other.status, 403, other.text);
    assert.equal(await storeDigest(api, ['hank', 'ivy', 'default']), before, 'nothing of either write is stored');
  });

  test('prune without user_id: 400 with no keys or an admin key (it used to act on "default"), and nothing pruned', async () => {
    await api.request('POST', '/sessions/d1/turns', { key: ADMIN, body: { turns: [turn('a dull default memory', { importance: 0.35 })] } });
    const before = await storeDigest(api, ['hank', 'ivy', 'default']);
    for (const key of [ADMIN, TEAM]) {
      const r = await api.request('POST', '/memory/prune', { key, body: { below_importance: 0.99 } });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(r.json.error.details.map((d: { path: string }) => d.path), ['user_id']);
    }
    assert.equal(await storeDigest(api, ['hank', 'ivy', 'default']), before);
    const named = await api.request('POST', '/memory/prune', { key: ADMIN, body: { user_id: 'default', below_importance: 0.99 } });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.json.deleted, 1);
  });

  test("prune without user_id with a key bound to one user acts for that user (the key names it)", async () => {
    const w = await api.request('POST', '/sessions/h2/turns', { key: HANK, body: turn('a dull hank memory', { importance: 0.35 }) });
    assert.equal(w.status, 202, w.text);
    await api.memory.idle();
    const r = await api.request('POST', '/memory/prune', { key: HANK, body: { session_id: 'h2' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.ids, w.json.ids);
  });
});

describe('prune without user_id, no API keys configured', () => {
  let api: Api;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  test('400 naming user_id; the default user is pruned only when named', async () => {
    const w = await api.request('POST', '/sessions/s/turns', { body: turn('dull', { importance: 0.35 }) });
    assert.equal(w.status, 202, w.text);
    const before = await storeDigest(api);
    const r = await api.request('POST', '/memory/prune', { body: { below_importance: 0.99 } });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error.details[0].message, /required/);
    assert.equal(await storeDigest(api), before);
    const named = await api.request('POST', '/memory/prune', { body: { user_id: 'default', below_importance: 0.99 } });
    assert.deepEqual(named.json, { deleted: 1, ids: w.json.ids });
  });
});
